"""Errors of the live-cluster client, and the response-code lookup table.

The tree (all below :class:`rmqlb.errors.RmqlbError`)::

    RmqlbError
    ├── ForbiddenRequest        a request code outside the read-only allowlist (exit 2);
    │                           raised before a single byte is written
    └── RemotingError           one request to one peer failed (exit 3 when it is fatal)
        ├── ConnectFailed       refused, unreachable, TLS handshake failed
        ├── ConnectionLost      the peer closed or reset the connection (pending calls fail)
        ├── BadFrame            the peer sent bytes that are not a remoting frame (an HTTP
        │                       answer says so: a web port was given)
        ├── RequestTimeout      no answer before the deadline
        │   └── TimedOutEarlier skipped: the peer let an earlier request time out
        └── NotANameServer      a broker answered where a NameServer was expected

A peer that *answers* with a non-zero code raises the protocol layer's
:class:`rmqlb.remoting.errors.ResponseError` subclasses (``TopicNotExist``,
``ConsumerNotOnline`` ...; looked up by code in ``RESPONSE_ERRORS``), and an undecodable body
its ``BodyError``/``FastJsonError``; both derive from :class:`rmqlb.errors.ProtocolError`.
:data:`CALL_ERRORS` is the tuple a caller catches to record "this request failed".
"""

from __future__ import annotations

from rmqlb.errors import ExitCode, ProtocolError, RmqlbError


class ForbiddenRequest(RmqlbError):
    """rmqlb refused to send a request code that is not on the read-only allowlist."""

    exit_code = ExitCode.BAD_INPUT

    def __init__(self, code: int, name: str) -> None:
        super().__init__(f"refusing to send request {code} ({name}): not a read-only request")
        self.code = code


class RemotingError(RmqlbError):
    """A request to one peer failed; ``target`` is the peer address."""

    exit_code = ExitCode.UNREACHABLE

    def __init__(self, message: str, target: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.target = target


class ConnectFailed(RemotingError):
    """No connection could be opened (refused, unreachable, TLS handshake failed)."""


class ConnectionLost(RemotingError):
    """The connection ended (EOF or reset) while a request was waiting."""


class BadFrame(RemotingError):
    """The peer sent bytes that are not a valid remoting frame (garbage, oversized)."""


class RequestTimeout(RemotingError):
    """No response arrived before the deadline."""


class TimedOutEarlier(RequestTimeout):
    """Not sent, or no longer awaited: the peer already let a request of this run time out
    (one deadline per run: a dead broker is waited on once)."""


class NotANameServer(RemotingError):
    """The address given as a NameServer answers like something else (a broker)."""


#: Everything one failed request can raise (ForbiddenRequest deliberately excluded: it is a
#: bug, never a cluster condition).
CALL_ERRORS: tuple[type[Exception], ...] = (RemotingError, ProtocolError)


class Failed(Exception):
    """A collection request failed (already recorded as a capture error unless the caller
    asked not to); ``error`` is what the call raised."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def failure_text(exc: BaseException, target: str) -> str:
    """``exc``'s message without a leading ``target: `` (the error names its target)."""
    text = str(exc) or type(exc).__name__
    prefix = f"{target}: "
    return text[len(prefix) :] if text.startswith(prefix) else text
