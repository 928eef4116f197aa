"""ACL request signing (RocketMQ ACL 1.0; also accepted by ACL 2.0 brokers, 5.3+).

Algorithm (protocol notes §9.1):

1. add ``AccessKey`` (and ``SecurityToken`` when there is one) to the extFields;
2. sort every extField except ``Signature`` by key in Java ``String`` order (upper-case
   keys such as ``AccessKey`` come before lower-case ones);
3. concatenate the *values only*, UTF-8 encode, append the raw body bytes;
4. ``Signature`` = Base64(HMAC-SHA1(secret key, that content)).

Worked example (the protocol notes' test vector):

>>> creds = Credentials("RocketMQ", "12345678", "87654321")
>>> signed = creds.sign({"topic": "topicA", "batch": "false", "unitMode": "false"}, b"")
>>> signed["Signature"]
'FQ2fq7p3PuzMwBD7QkNW7AU32/c='
>>> "12345678" in repr(creds)
False

Sign *after* every other extField is final: the broker recomputes the same content.
The secret is kept out of every ``repr``/``str``; never log a :class:`Credentials`' fields.
"""

from __future__ import annotations

from collections.abc import Mapping

from rmqlb.model.javaorder import java_key

ACCESS_KEY = "AccessKey"
SECURITY_TOKEN = "SecurityToken"
SIGNATURE = "Signature"


def signing_content(ext_fields: Mapping[str, str | None], body: bytes | None) -> bytes:
    """The bytes that are signed: values sorted by key (Java order), then the body.

    >>> signing_content({"b": "2", "A": "1", "Signature": "x"}, b"!")
    b'12!'
    """
    keys = sorted((k for k in ext_fields if k != SIGNATURE), key=java_key)
    content = "".join(ext_fields[k] or "" for k in keys).encode("utf-8")
    return content + (body or b"")


def signature(ext_fields: Mapping[str, str | None], body: bytes | None, secret_key: str) -> str:
    """Base64 HMAC-SHA1 of :func:`signing_content` under ``secret_key``.

    ``ext_fields`` must already contain ``AccessKey`` (and ``SecurityToken``, if used).
    """
    import base64  # noqa: PLC0415  (only signed requests need these; hashlib loads OpenSSL)
    import hashlib  # noqa: PLC0415
    import hmac  # noqa: PLC0415

    mac = hmac.new(secret_key.encode("utf-8"), signing_content(ext_fields, body), hashlib.sha1)
    return base64.b64encode(mac.digest()).decode("ascii")


def sign(
    ext_fields: Mapping[str, str | None],
    body: bytes | None,
    access_key: str,
    secret_key: str,
    security_token: str | None = None,
) -> dict[str, str | None]:
    """A copy of ``ext_fields`` with ``AccessKey``, ``SecurityToken`` and ``Signature`` added."""
    out: dict[str, str | None] = {k: v for k, v in ext_fields.items() if k != SIGNATURE}
    out[ACCESS_KEY] = access_key
    if security_token:
        out[SECURITY_TOKEN] = security_token
    out[SIGNATURE] = signature(out, body, secret_key)
    return out


class Credentials:
    """An access key and its secret (and optional security token) for signing requests.

    ``repr`` and ``str`` show the access key only; the secret lives in a name-mangled slot
    that no dataclass/``vars()`` dump picks up.
    """

    __slots__ = ("__secret", "access_key", "security_token")

    def __init__(self, access_key: str, secret_key: str, security_token: str | None = None):
        if not access_key or not secret_key:
            raise ValueError("both an access key and a secret key are required")
        self.access_key = access_key
        self.security_token = security_token
        self.__secret = secret_key

    def sign(
        self, ext_fields: Mapping[str, str | None], body: bytes | None
    ) -> dict[str, str | None]:
        """``ext_fields`` signed with these credentials (see :func:`sign`)."""
        return sign(ext_fields, body, self.access_key, self.__secret, self.security_token)

    def __repr__(self) -> str:
        token = ", security_token=***" if self.security_token else ""
        return f"Credentials(access_key={self.access_key!r}, secret_key=***{token})"

    __str__ = __repr__


#: What a broker's ACL refusal (code 1, ``AclException`` remark) means, by its message.
_REFUSALS = (
    ("Check signature failed", "wrong secret key"),
    ("No acl config for", "unknown access key"),
    ("No accessKey is configured", "no access key given"),
)
_ACL_EXCEPTION = "AclException: "
_NO_PERMISSION = 16


def credential_refusal(code: int, remark: str | None) -> str | None:
    """Why a broker refused a request's credentials, in words, or ``None`` when the answer
    is no such refusal (ACL 1.0: code 1 with an ``AclException`` remark; ACL 2.0: code 16).

    >>> credential_refusal(1, "org.apache.rocketmq.acl.common.AclException: Check signature "
    ...                       "failed for accessKey=rmqmonitor, org.apache.rocketmq.acl.X")
    'wrong secret key (Check signature failed for accessKey=rmqmonitor)'
    >>> credential_refusal(17, "No topic route info") is None
    True
    """
    text = remark or ""
    if code == _NO_PERMISSION:
        return f"no permission ({text.strip()[:200]})" if text.strip() else "no permission"
    start = text.find(_ACL_EXCEPTION)
    if code != 1 or start < 0:
        return None
    message = text[start + len(_ACL_EXCEPTION) :].split(", org.apache.", 1)[0].strip()[:200]
    for marker, meaning in _REFUSALS:
        if message.startswith(marker):
            return f"{meaning} ({message})"
    return f"refused ({message})"
