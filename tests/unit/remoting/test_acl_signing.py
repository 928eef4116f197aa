"""ACL signing: the protocol notes' vectors and a signature computed by hand here."""

from __future__ import annotations

import base64
import hashlib
import hmac

from rmqlb.remoting import acl


def test_hmac_vector() -> None:
    # The raw HMAC-SHA1 vector: key 12345678, data RocketMQ.
    assert acl.signature({}, b"RocketMQ", "12345678") == "IUc8rrO/0gDch8CjObLQsW2rsiA="


def test_request_vector_with_security_token() -> None:
    ext = {"topic": "topicA", "batch": "false", "unitMode": "false"}
    signed = acl.sign(ext, None, "RocketMQ", "12345678", "87654321")
    assert acl.signing_content({k: v for k, v in signed.items() if k != "Signature"}, None) == (
        b"RocketMQ87654321falsetopicAfalse"
    )
    assert signed["Signature"] == "FQ2fq7p3PuzMwBD7QkNW7AU32/c="
    assert signed["AccessKey"] == "RocketMQ" and signed["SecurityToken"] == "87654321"
    assert ext == {"topic": "topicA", "batch": "false", "unitMode": "false"}  # not mutated


def test_signature_computed_by_hand_with_a_body() -> None:
    ext = {"consumerGroup": "GroupA", "clientId": "10.0.0.1@42#7", "jstackEnable": "false"}
    body = b'{"probe":true}'
    secret = "s3cr3t-\u00e9"
    signed = acl.Credentials("ak", secret).sign(ext, body)
    # By hand: keys in Java String order (upper case first): AccessKey, clientId,
    # consumerGroup, jstackEnable; values only, concatenated; then the body bytes.
    content = "ak" + "10.0.0.1@42#7" + "GroupA" + "false"
    digest = hmac.new(secret.encode(), content.encode() + body, hashlib.sha1).digest()
    assert signed["Signature"] == base64.b64encode(digest).decode()
    assert "SecurityToken" not in signed
    # Any change to a value or to the body changes the signature.
    assert acl.Credentials("ak", secret).sign(ext, body + b" ")["Signature"] != signed["Signature"]


def test_resigning_ignores_an_old_signature() -> None:
    once = acl.sign({"topic": "T"}, b"", "ak", "sk")
    twice = acl.sign(once, b"", "ak", "sk")
    assert once == twice


def test_secret_never_shown() -> None:
    creds = acl.Credentials("my-access", "TOP-SECRET-VALUE", "TOKEN-VALUE")
    for text in (repr(creds), str(creds), f"{creds}", repr([creds])):
        assert "TOP-SECRET-VALUE" not in text
        assert "TOKEN-VALUE" not in text
        assert "my-access" in text
