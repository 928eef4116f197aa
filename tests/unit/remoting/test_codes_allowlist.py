"""Request codes, the read-only allowlist, names and MQVersion ordinals."""

from __future__ import annotations

import pytest

from rmqlb.remoting.codes import (
    LANGUAGE_BYTES,
    READ_ONLY_CODES,
    REQUEST_CODE_NAMES,
    RMQLB_LANGUAGE,
    RMQLB_VERSION,
    LanguageCode,
    RequestCode,
    ResponseCode,
    language_name,
    mq_version,
    request_code_name,
    response_code_name,
    version_name,
)
from rmqlb.remoting.errors import (
    ConsumeMsgTimeout,
    ConsumerNotOnline,
    ResponseError,
    TopicNotExist,
    response_error,
)

MUTATING = [
    RequestCode.SEND_MESSAGE,
    RequestCode.PULL_MESSAGE,
    RequestCode.UPDATE_CONSUMER_OFFSET,
    RequestCode.UPDATE_AND_CREATE_TOPIC,
    RequestCode.UPDATE_BROKER_CONFIG,
    RequestCode.HEART_BEAT,
    RequestCode.UNREGISTER_CLIENT,
    RequestCode.LOCK_BATCH_MQ,
    RequestCode.PUT_KV_CONFIG,
    RequestCode.REGISTER_BROKER,
    RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
    RequestCode.WIPE_WRITE_PERM_OF_BROKER,
    RequestCode.DELETE_SUBSCRIPTIONGROUP,
    RequestCode.RESET_CONSUMER_OFFSET_IN_BROKER,
    RequestCode.DELETE_TOPIC_IN_BROKER,
    RequestCode.DELETE_TOPIC_IN_NAMESRV,
    RequestCode.RESET_CONSUMER_CLIENT_OFFSET,
    RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
    RequestCode.CONSUME_MESSAGE_DIRECTLY,
    RequestCode.SET_MESSAGE_REQUEST_MODE,
    RequestCode.POP_MESSAGE,
    RequestCode.ACK_MESSAGE,
    RequestCode.AUTH_CREATE_USER,
]


def test_numbers_match_the_java_constants() -> None:
    expected = {
        "GET_ROUTEINFO_BY_TOPIC": 105,
        "GET_BROKER_CLUSTER_INFO": 106,
        "GET_ALL_TOPIC_LIST_FROM_NAMESERVER": 206,
        "GET_CONSUMER_LIST_BY_GROUP": 38,
        "GET_CONSUMER_CONNECTION_LIST": 203,
        "GET_CONSUMER_RUNNING_INFO": 307,
        "GET_CONSUME_STATS": 208,
        "GET_ALL_SUBSCRIPTIONGROUP_CONFIG": 201,
        "QUERY_TOPIC_CONSUME_BY_WHO": 300,
        "QUERY_CONSUMER_OFFSET": 14,
        "GET_MAX_OFFSET": 30,
        "GET_MIN_OFFSET": 31,
        "GET_TOPIC_STATS_INFO": 202,
        "GET_BROKER_RUNTIME_INFO": 28,
        "GET_ALL_CONSUMER_OFFSET": 43,
        "UPDATE_AND_CREATE_TOPIC": 17,
        "DELETE_TOPIC_IN_BROKER": 215,
        "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP": 200,
        "HEART_BEAT": 34,
        "SEND_MESSAGE": 10,
        "INVOKE_BROKER_TO_RESET_OFFSET": 222,
    }
    assert {name: getattr(RequestCode, name) for name in expected} == expected
    assert (ResponseCode.CONSUMER_NOT_ONLINE, ResponseCode.CONSUME_MSG_TIMEOUT) == (206, 207)
    assert response_code_name(209) == "POLLING_FULL"  # 4.9.x's name is an alias
    assert ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED == 209


def test_allowlist_holds_only_named_read_only_codes() -> None:
    assert set(REQUEST_CODE_NAMES) >= READ_ONLY_CODES
    # Every addition is a reviewed decision: name it here and in docs/protocol.md.
    assert {request_code_name(c) for c in READ_ONLY_CODES} == {
        "GET_ROUTEINFO_BY_TOPIC",
        "GET_BROKER_CLUSTER_INFO",
        "GET_ALL_TOPIC_LIST_FROM_NAMESERVER",
        "GET_CONSUMER_LIST_BY_GROUP",
        "GET_CONSUMER_CONNECTION_LIST",
        "GET_CONSUMER_RUNNING_INFO",
        "GET_CONSUME_STATS",
        "GET_ALL_SUBSCRIPTIONGROUP_CONFIG",
        "QUERY_TOPIC_CONSUME_BY_WHO",
        "QUERY_CONSUMER_OFFSET",
        "GET_MAX_OFFSET",
        "GET_MIN_OFFSET",
        "GET_TOPIC_STATS_INFO",
        "GET_BROKER_RUNTIME_INFO",
        "GET_BROKER_CONFIG",
        "GET_ALL_MESSAGE_REQUEST_MODE",
        "QUERY_ASSIGNMENT",
        "GET_ALL_CONSUMER_OFFSET",
    }
    for code in MUTATING:
        assert code not in READ_ONLY_CODES, request_code_name(code)


@pytest.mark.parametrize("code", sorted(READ_ONLY_CODES))
def test_every_allowlisted_code_has_a_read_only_name(code: int) -> None:
    assert request_code_name(code).startswith(("GET_", "QUERY_"))


def test_names() -> None:
    assert request_code_name(307) == "GET_CONSUMER_RUNNING_INFO"
    assert request_code_name(-1) == "-1"
    assert response_code_name(17) == "TOPIC_NOT_EXIST"
    assert response_code_name(209) == "POLLING_FULL"
    assert language_name(3) == language_name(LanguageCode.PYTHON) == RMQLB_LANGUAGE
    assert language_name(200) == "200"


@pytest.mark.parametrize(
    ("release", "ordinal", "name"),
    [
        ((4, 0, 0), 213, "V4_0_0"),
        ((4, 5, 2), 317, "V4_5_2"),
        ((4, 8, 0), 373, "V4_8_0"),
        ((4, 9, 4), 401, "V4_9_4"),
        ((4, 9, 8), 409, "V4_9_8"),
        ((5, 0, 0), 413, "V5_0_0"),
        ((5, 2, 0), 453, "V5_2_0"),
        ((5, 3, 3), 479, "V5_3_3"),
    ],
)
def test_mq_version_ordinals(release: tuple[int, int, int], ordinal: int, name: str) -> None:
    assert mq_version(*release) == ordinal
    assert version_name(ordinal) == name
    assert version_name(ordinal - 1) == name + "_SNAPSHOT"


def test_version_edges() -> None:
    assert version_name(612) == "HIGHER_VERSION"
    assert version_name(62) == "ordinal 62"
    assert RMQLB_VERSION >= 401  # NameServers answer routes in standard JSON


def test_response_errors_by_lookup_table() -> None:
    err = response_error(206, "the consumer group[G] not online", 203)
    assert isinstance(err, ConsumerNotOnline) and err.code == 206
    assert str(err) == (
        "GET_CONSUMER_CONNECTION_LIST failed: 206 CONSUMER_NOT_ONLINE: "
        "the consumer group[G] not online"
    )
    assert isinstance(response_error(207), ConsumeMsgTimeout)
    assert isinstance(response_error(17, "x\nSee https://faq"), TopicNotExist)
    assert str(response_error(17, "x\nSee https://faq")).endswith(": x")
    other = response_error(4242)
    assert type(other) is ResponseError and "4242" in str(other)


def test_every_code_has_its_first_name() -> None:
    """Each code class's names map back to their numbers; a shared number keeps the name
    defined first (the 5.x spelling), like an enum's alias."""
    for codes, name_of in (
        (RequestCode, request_code_name),
        (ResponseCode, response_code_name),
        (LanguageCode, language_name),
    ):
        members = {k: v for k, v in vars(codes).items() if k.isupper()}
        assert members and all(type(v) is int for v in members.values())
        for value in members.values():
            assert getattr(codes, name_of(value)) == value
    assert response_code_name(ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED) == "POLLING_FULL"
    assert {name: getattr(LanguageCode, name) for name in LANGUAGE_BYTES} == LANGUAGE_BYTES
    assert LANGUAGE_BYTES["NODE_JS"] == 13
