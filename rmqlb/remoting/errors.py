"""Protocol-level errors, and broker/NameServer response codes mapped to exception classes.

::

    rmqlb.errors.ProtocolError
    ├── rmqlb.errors.FrameError      a frame could not be decoded (length, header, size)
    ├── FastJsonError                a body or header is not even lenient fastjson JSON
    ├── BodyError                    valid JSON, but not the shape the body type needs
    └── ResponseError                the peer answered with a non-zero response code
        ├── SystemError_ (1)  SystemBusy (2)  RequestCodeNotSupported (3)
        ├── ServiceNotAvailable (14)  NoPermission (16)  TopicNotExist (17)
        ├── SubscriptionGroupNotExist (26)  ConsumerNotOnline (206)
        └── ConsumeMsgTimeout (207)  FlowControl (215)  GoAway (1500)

Use :func:`response_error` to turn a failed response into the right class (a lookup table,
``RESPONSE_ERRORS``), so callers can ``except TopicNotExist``.
"""

from __future__ import annotations

from rmqlb.errors import ProtocolError
from rmqlb.remoting.codes import ResponseCode, request_code_name, response_code_name
from rmqlb.render.safe import cap


class FastJsonError(ProtocolError):
    """Text that is not valid (even lenient) RocketMQ JSON, or exceeds the parser limits."""

    def __init__(self, message: str, position: int | None = None) -> None:
        where = f" at offset {position}" if position is not None else ""
        super().__init__(f"malformed JSON{where}: {message}")
        self.position = position


class BodyError(ProtocolError):
    """A body parsed as JSON but lacks the fields (or types) its body type requires."""


class ResponseError(ProtocolError):
    """A response with a non-zero code. ``code``/``remark`` are the peer's, verbatim; the
    message shows the remark's first line, capped (:func:`~rmqlb.render.safe.cap`)."""

    code: int = -1

    def __init__(self, code: int, remark: str | None = None, request_code: int | None = None):
        self.code = code
        self.remark = remark
        self.request_code = request_code
        what = request_code_name(request_code) if request_code is not None else "request"
        text = f"{what} failed: {code} {response_code_name(code)}"
        lines = remark.strip().splitlines() if remark else []
        if lines:
            text += f": {cap(lines[0])}"
        super().__init__(text)


class SystemError_(ResponseError):  # trailing _: do not shadow the builtin SystemError
    """Code 1: generic failure (also unknown consumer, ACL 1.0 failures)."""


class SystemBusy(ResponseError):
    """Code 2: flow control / thread pool full; retry later with back-off."""


class RequestCodeNotSupported(ResponseError):
    """Code 3: the server's version does not know this request code."""


class ServiceNotAvailable(ResponseError):
    """Code 14: the broker is shutting down or not ready."""


class NoPermission(ResponseError):
    """Code 16: ACL 2.0 authentication/authorization failure."""


class TopicNotExist(ResponseError):
    """Code 17: the NameServer or broker has no such topic."""


class SubscriptionGroupNotExist(ResponseError):
    """Code 26: the broker has no such subscription group."""


class ConsumerNotOnline(ResponseError):
    """Code 206: the broker knows no online consumer of the group."""


class ConsumeMsgTimeout(ResponseError):
    """Code 207: the consumer did not answer the relayed running-info request in 10 s."""


class QueryNotFound(ResponseError):
    """Code 22: QUERY_CONSUMER_OFFSET found no committed offset (the group never committed)."""


class FlowControl(ResponseError):
    """Code 215: flow control."""


class GoAway(ResponseError):
    """Code 1500: the server (usually a 5.x Proxy) is shutting down."""


RESPONSE_ERRORS: dict[int, type[ResponseError]] = {
    ResponseCode.SYSTEM_ERROR: SystemError_,
    ResponseCode.SYSTEM_BUSY: SystemBusy,
    ResponseCode.REQUEST_CODE_NOT_SUPPORTED: RequestCodeNotSupported,
    ResponseCode.SERVICE_NOT_AVAILABLE: ServiceNotAvailable,
    ResponseCode.NO_PERMISSION: NoPermission,
    ResponseCode.TOPIC_NOT_EXIST: TopicNotExist,
    ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST: SubscriptionGroupNotExist,
    ResponseCode.CONSUMER_NOT_ONLINE: ConsumerNotOnline,
    ResponseCode.CONSUME_MSG_TIMEOUT: ConsumeMsgTimeout,
    ResponseCode.FLOW_CONTROL: FlowControl,
    ResponseCode.QUERY_NOT_FOUND: QueryNotFound,
    ResponseCode.GO_AWAY: GoAway,
}


def response_error(
    code: int, remark: str | None = None, request_code: int | None = None
) -> ResponseError:
    """The exception for a failed response: a specific subclass when the code has one.

    >>> err = response_error(17, "No topic route info in name server for the topic: T", 105)
    >>> type(err).__name__, str(err)[:46]
    ('TopicNotExist', 'GET_ROUTEINFO_BY_TOPIC failed: 17 TOPIC_NOT_EX')
    """
    cls = RESPONSE_ERRORS.get(code, ResponseError)
    return cls(code, remark, request_code)
