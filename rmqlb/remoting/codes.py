"""Request, response and language codes of the RocketMQ remoting protocol, and the
read-only allowlist.

The numbers are those of Apache RocketMQ 4.9.x and 5.x (``RequestCode``, ``ResponseCode``,
``RemotingSysResponseCode``, ``LanguageCode``). :data:`READ_ONLY_CODES` is the only set of
request codes rmqlb ever sends; everything else (including every mutating admin code listed
here so tests can name it) must be refused before it reaches a socket.

>>> RequestCode.GET_ROUTEINFO_BY_TOPIC in READ_ONLY_CODES
True
>>> RequestCode.UPDATE_AND_CREATE_TOPIC in READ_ONLY_CODES
False
>>> request_code_name(105), request_code_name(99999)
('GET_ROUTEINFO_BY_TOPIC', '99999')
>>> version_name(401), version_name(479), version_name(612)
('V4_9_4', 'V5_3_3', 'HIGHER_VERSION')
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# The three code classes are namespaces of plain ints, not IntEnums: an IntEnum of their 160
# members took 5 ms to create, at the start of every run that talks to a cluster. Names come
# from :func:`request_code_name`, :func:`response_code_name` and :func:`language_name`.


class RequestCode:
    """Request codes (Java ``RequestCode``). Read-only ones first, then mutating ones."""

    # --- read-only (NameServer) ---
    GET_KV_CONFIG = 101
    GET_ROUTEINFO_BY_TOPIC = 105
    GET_BROKER_CLUSTER_INFO = 106
    GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206
    GET_TOPICS_BY_CLUSTER = 224
    GET_SYSTEM_TOPIC_LIST_FROM_NS = 304
    GET_NAMESRV_CONFIG = 319
    # --- read-only (Broker) ---
    QUERY_CONSUMER_OFFSET = 14
    GET_ALL_TOPIC_CONFIG = 21
    GET_BROKER_CONFIG = 26
    GET_BROKER_RUNTIME_INFO = 28
    GET_MAX_OFFSET = 30
    GET_MIN_OFFSET = 31
    GET_CONSUMER_LIST_BY_GROUP = 38
    GET_ALL_CONSUMER_OFFSET = 43
    GET_ALL_SUBSCRIPTIONGROUP_CONFIG = 201
    GET_TOPIC_STATS_INFO = 202
    GET_CONSUMER_CONNECTION_LIST = 203
    GET_PRODUCER_CONNECTION_LIST = 204
    GET_CONSUME_STATS = 208
    QUERY_TOPIC_CONSUME_BY_WHO = 300
    GET_CONSUMER_RUNNING_INFO = 307
    QUERY_TOPICS_BY_CONSUMER = 343
    QUERY_SUBSCRIPTION_BY_CONSUMER = 345
    GET_TOPIC_CONFIG = 351
    GET_SUBSCRIPTIONGROUP_CONFIG = 352
    QUERY_ASSIGNMENT = 400
    GET_ALL_MESSAGE_REQUEST_MODE = 402
    # --- produce / consume paths (never sent by rmqlb) ---
    SEND_MESSAGE = 10
    PULL_MESSAGE = 11
    QUERY_MESSAGE = 12
    QUERY_BROKER_OFFSET = 13
    UPDATE_CONSUMER_OFFSET = 15
    SEARCH_OFFSET_BY_TIMESTAMP = 29
    GET_EARLIEST_MSG_STORETIME = 32
    VIEW_MESSAGE_BY_ID = 33
    HEART_BEAT = 34
    UNREGISTER_CLIENT = 35
    CONSUMER_SEND_MSG_BACK = 36
    END_TRANSACTION = 37
    CHECK_TRANSACTION_STATE = 39
    NOTIFY_CONSUMER_IDS_CHANGED = 40
    LOCK_BATCH_MQ = 41
    UNLOCK_BATCH_MQ = 42
    SEND_MESSAGE_V2 = 310
    SEND_BATCH_MESSAGE = 320
    CONSUME_MESSAGE_DIRECTLY = 309
    LITE_PULL_MESSAGE = 361
    POP_MESSAGE = 200050
    ACK_MESSAGE = 200051
    PEEK_MESSAGE = 200052
    CHANGE_MESSAGE_INVISIBLETIME = 200053
    NOTIFICATION = 200054
    POLLING_INFO = 200055
    POP_ROLLBACK = 200056
    BATCH_ACK_MESSAGE = 200151
    # --- mutating admin / cluster management (never sent by rmqlb) ---
    UPDATE_AND_CREATE_TOPIC = 17
    UPDATE_AND_CREATE_TOPIC_LIST = 18
    UPDATE_BROKER_CONFIG = 25
    TRIGGER_DELETE_FILES = 27
    PUT_KV_CONFIG = 100
    DELETE_KV_CONFIG = 102
    REGISTER_BROKER = 103
    UNREGISTER_BROKER = 104
    UPDATE_AND_CREATE_SUBSCRIPTIONGROUP = 200
    WIPE_WRITE_PERM_OF_BROKER = 205
    DELETE_SUBSCRIPTIONGROUP = 207
    SUSPEND_CONSUMER = 209
    RESUME_CONSUMER = 210
    RESET_CONSUMER_OFFSET_IN_CONSUMER = 211
    RESET_CONSUMER_OFFSET_IN_BROKER = 212
    ADJUST_CONSUMER_THREAD_POOL = 213
    DELETE_TOPIC_IN_BROKER = 215
    DELETE_TOPIC_IN_NAMESRV = 216
    REGISTER_TOPIC_IN_NAMESRV = 217
    RESET_CONSUMER_CLIENT_OFFSET = 220
    GET_CONSUMER_STATUS_FROM_CLIENT = 221
    INVOKE_BROKER_TO_RESET_OFFSET = 222
    INVOKE_BROKER_TO_GET_CONSUMER_STATUS = 223
    UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST = 225
    CLEAN_EXPIRED_CONSUMEQUEUE = 306
    CLONE_GROUP_OFFSET = 314
    CLEAN_UNUSED_TOPIC = 316
    UPDATE_NAMESRV_CONFIG = 318
    ADD_WRITE_PERM_OF_BROKER = 327
    DELETE_EXPIRED_COMMITLOG = 329
    UPDATE_AND_GET_GROUP_FORBIDDEN = 353
    SET_MESSAGE_REQUEST_MODE = 401
    UPDATE_AND_CREATE_STATIC_TOPIC = 513
    ADD_BROKER = 902
    REMOVE_BROKER = 903
    RESET_MASTER_FLUSH_OFFSET = 908
    AUTH_CREATE_USER = 3001
    AUTH_UPDATE_USER = 3002
    AUTH_DELETE_USER = 3003
    AUTH_CREATE_ACL = 3006
    AUTH_UPDATE_ACL = 3007
    AUTH_DELETE_ACL = 3008


class ResponseCode:
    """Response codes a client may see (Java ``ResponseCode`` + ``RemotingSysResponseCode``).

    209–211 mean different things in 4.9.x (ACL admin failures) and 5.x; the 5.x names are
    defined first and are the codes' names, the 4.9.x ones follow as aliases.
    """

    SUCCESS = 0
    SYSTEM_ERROR = 1
    SYSTEM_BUSY = 2
    REQUEST_CODE_NOT_SUPPORTED = 3
    TRANSACTION_FAILED = 4
    FLUSH_DISK_TIMEOUT = 10
    SLAVE_NOT_AVAILABLE = 11
    FLUSH_SLAVE_TIMEOUT = 12
    MESSAGE_ILLEGAL = 13
    SERVICE_NOT_AVAILABLE = 14
    VERSION_NOT_SUPPORTED = 15
    NO_PERMISSION = 16
    TOPIC_NOT_EXIST = 17
    TOPIC_EXIST_ALREADY = 18
    PULL_NOT_FOUND = 19
    PULL_RETRY_IMMEDIATELY = 20
    PULL_OFFSET_MOVED = 21
    QUERY_NOT_FOUND = 22
    SUBSCRIPTION_PARSE_FAILED = 23
    SUBSCRIPTION_NOT_EXIST = 24
    SUBSCRIPTION_NOT_LATEST = 25
    SUBSCRIPTION_GROUP_NOT_EXIST = 26
    FILTER_DATA_NOT_EXIST = 27
    FILTER_DATA_NOT_LATEST = 28
    INVALID_PARAMETER = 29
    TRANSACTION_SHOULD_COMMIT = 200
    TRANSACTION_SHOULD_ROLLBACK = 201
    TRANSACTION_STATE_UNKNOW = 202
    TRANSACTION_STATE_GROUP_WRONG = 203
    NO_BUYER_ID = 204
    NOT_IN_CURRENT_UNIT = 205
    CONSUMER_NOT_ONLINE = 206
    CONSUME_MSG_TIMEOUT = 207
    NO_MESSAGE = 208
    POLLING_FULL = 209
    UPDATE_AND_CREATE_ACL_CONFIG_FAILED = 209
    POLLING_TIMEOUT = 210
    DELETE_ACL_CONFIG_FAILED = 210
    BROKER_NOT_EXIST = 211
    UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED = 211
    BROKER_DISPATCH_NOT_COMPLETE = 212
    BROADCAST_CONSUMPTION = 213
    FLOW_CONTROL = 215
    NOT_LEADER_FOR_QUEUE = 501
    ILLEGAL_OPERATION = 604
    GO_AWAY = 1500
    USER_NOT_EXIST = 3001
    POLICY_NOT_EXIST = 3002


class LanguageCode:
    """Language of the sender of a frame: a byte in binary headers, the name in JSON."""

    JAVA = 0
    CPP = 1
    DOTNET = 2
    PYTHON = 3
    DELPHI = 4
    ERLANG = 5
    RUBY = 6
    OTHER = 7
    HTTP = 8
    GO = 9
    PHP = 10
    OMS = 11
    RUST = 12
    NODE_JS = 13  # 5.x only: a 4.9.x server does not know this name


# The only request codes rmqlb sends. Each one changes no server state.
READ_ONLY_CODES: frozenset[int] = frozenset(
    {
        # NameServer: a topic's brokers and queue counts (mqAll of every subscribed topic,
        # and %RETRY%<group> to find the brokers hosting a group).
        RequestCode.GET_ROUTEINFO_BY_TOPIC,
        # NameServer: every broker name with its addresses (master / slaves) and clusters.
        RequestCode.GET_BROKER_CLUSTER_INFO,
        # NameServer: all topics, to ask the brokers who consumes each one (group discovery).
        RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
        # Broker: cidAll exactly as each client receives it during rebalancing.
        RequestCode.GET_CONSUMER_LIST_BY_GROUP,
        # Broker: connections (clientId, address, language, version), model, subscriptions.
        RequestCode.GET_CONSUMER_CONNECTION_LIST,
        # Broker relays to one client: its mqTable (actual queues), strategy, subscriptions.
        RequestCode.GET_CONSUMER_RUNNING_INFO,
        # Broker: per-queue broker/consumer offsets (lag per queue and per owner).
        RequestCode.GET_CONSUME_STATS,
        # Broker: every subscription group on that broker, for --all-groups (incl. groups
        # whose clients are offline, which the topic list may not show).
        RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
        # Broker: groups with a subscription or committed offsets for a topic; finds groups
        # without a subscription config, and the groups of `status -t` / `dump -t`.
        RequestCode.QUERY_TOPIC_CONSUME_BY_WHO,
        # Broker: a topic's min and max offset per queue id 0..writeQueueNums-1: lag of
        # queues GET_CONSUME_STATS leaves out (a topic absent from the group's current
        # subscription table) and of queues written but never read.
        RequestCode.GET_TOPIC_STATS_INFO,
        # Broker: one queue's committed offset of a group; code 22 = never committed.
        RequestCode.QUERY_CONSUMER_OFFSET,
        # Broker: one queue's max / min offset (response extField ``offset``): the same
        # numbers as GET_TOPIC_STATS_INFO for a single queue.
        RequestCode.GET_MAX_OFFSET,
        RequestCode.GET_MIN_OFFSET,
        # Broker: its runtime statistics (KVTable), what mqadmin clusterList shows.
        RequestCode.GET_BROKER_RUNTIME_INFO,
        # Broker: its configuration (Properties text); rmqlb keeps only the four keys
        # broker-side assignment reads (serverLoadBalancerEnable, defaultMessageRequestMode,
        # defaultPopShareQueueNum, loadBalancePollNameServerInterval) and how long a
        # connection without heartbeat stays listed (channelExpiredTimeout), and drops the rest.
        RequestCode.GET_BROKER_CONFIG,
        # 5.x broker: every (topic, group)'s message request mode (PULL / POP and the POP
        # share number) as SET_MESSAGE_REQUEST_MODE stored it; a 4.x broker answers code 3.
        RequestCode.GET_ALL_MESSAGE_REQUEST_MODE,
        # 5.x broker: what it would assign one client of a group (the request body names
        # topic, group, client id, model and strategy). Read-only: in 5.0.0 and 5.1.4
        # QueryAssignmentProcessor.queryAssignment only reads the group's request mode, the
        # broker's consumer list and its cached route, and computes the answer; nothing is
        # stored or sent to a client. Its one side effect is the cache fill every reader of
        # TopicRouteInfoManager.getTopicSubscribeInfo causes: a topic missing from the
        # broker's route cache is fetched from the NameServer, as the broker's next route
        # poll would. (SET_MESSAGE_REQUEST_MODE, 401, the processor's other code, is not sent.)
        RequestCode.QUERY_ASSIGNMENT,
        # Broker: every group's committed offsets (``topic@group`` -> queue id -> offset),
        # read once per master in a capture of many groups, so consume stats can be asked
        # per topic and not at all of a broker holding no offsets of the group. Read-only:
        # in 4.9.8, 5.0.0 and 5.1.4 AdminBrokerProcessor.getAllConsumerOffset only calls
        # ConsumerOffsetManager.encode(), a fastjson serialization of the manager through its
        # getters (getOffsetTable; 5.x also getDataVersion and getGroupTopicMap, a map built
        # afresh from the table's keys); nothing is stored, persisted or sent on.
        RequestCode.GET_ALL_CONSUMER_OFFSET,
    }
)
# Deliberately left out although read-only: GET_ALL_TOPIC_CONFIG (every topic of a broker:
# large, and not needed).


def _names(codes: type) -> Mapping[int, str]:
    """The name of each code of ``codes``: the first defined, when several share it."""
    names: dict[int, str] = {}
    for name, value in vars(codes).items():
        if name.isupper() and type(value) is int:
            names.setdefault(value, name)
    return MappingProxyType(names)


REQUEST_CODE_NAMES = _names(RequestCode)
RESPONSE_CODE_NAMES = _names(ResponseCode)
LANGUAGE_NAMES = _names(LanguageCode)
#: The byte of each language name a binary header can carry.
LANGUAGE_BYTES: Mapping[str, int] = MappingProxyType(
    {name: code for code, name in LANGUAGE_NAMES.items()}
)


def request_code_name(code: int) -> str:
    """The Java name of a request code, or the number as text when unknown."""
    return REQUEST_CODE_NAMES.get(code, str(code))


def response_code_name(code: int) -> str:
    """The Java name of a response code (5.x spelling), or the number as text."""
    return RESPONSE_CODE_NAMES.get(code, str(code))


def language_name(code: int) -> str:
    """The name of a language byte (``3`` -> ``PYTHON``); unknown bytes as their number."""
    return LANGUAGE_NAMES.get(code, str(code))


# ``MQVersion.Version`` ordinals: 213 + (a-4)*200 + b*20 + c*2 for release a.b.c.
_V4_0_0 = 213
HIGHER_VERSION = 612


def mq_version(major: int, minor: int, patch: int) -> int:
    """The ``version`` header value of release ``major.minor.patch`` (4.x and 5.x).

    >>> mq_version(4, 9, 4), mq_version(5, 2, 0)
    (401, 453)
    """
    return _V4_0_0 + (major - 4) * 200 + minor * 20 + patch * 2


def version_name(ordinal: int) -> str:
    """The ``MQVersion.Version`` name of a header version (4.0.0 .. 5.9.9).

    Ordinals below 4.0.0 (3.x, irregular) come back as ``"ordinal <n>"``.

    >>> version_name(373), version_name(452)
    ('V4_8_0', 'V5_2_0_SNAPSHOT')
    """
    if ordinal >= HIGHER_VERSION:
        return "HIGHER_VERSION"
    if ordinal < _V4_0_0 - 1:
        return f"ordinal {ordinal}"
    offset = ordinal - _V4_0_0
    snapshot = offset % 2 == 1
    if snapshot:
        offset += 1
    major, rest = divmod(offset, 200)
    minor, patch2 = divmod(rest, 20)
    name = f"V{4 + major}_{minor}_{patch2 // 2}"
    return name + "_SNAPSHOT" if snapshot else name


# What rmqlb puts in its own headers. 401 (V4_9_4) is the lowest version for which a
# NameServer answers GET_ROUTEINFO_BY_TOPIC in standard JSON; nothing else rmqlb sends
# depends on the version.
RMQLB_LANGUAGE = "PYTHON"
RMQLB_VERSION = mq_version(4, 9, 4)
