"""Java hash codes and hash-container orders, against values printed by OpenJDK 17.

The expected numbers were printed by small Java programs on OpenJDK 17.0.15 with the
RocketMQ 4.9.8 classes (``MessageQueue``, ``FilterAPI.buildSubscriptionData``) and by
reading the table length of ``HashMap``/``ConcurrentHashMap`` after filling them.
"""

from __future__ import annotations

import doctest

import pytest

from rmqlb.model import Subscription
from rmqlb.remoting import bodies, javahash
from rmqlb.remoting.javahash import (
    HashTable,
    concurrent_map,
    concurrent_put_all,
    hash_map,
    java_string_hash,
    message_queue_hash,
)


def test_docstring_examples() -> None:
    failures, tried = doctest.testmod(javahash)
    assert tried > 0 and failures == 0


def test_hash_codes_are_javas() -> None:
    assert message_queue_hash("RecTopic", "broker-a", 0) == 920886059
    assert message_queue_hash("%RETRY%G", "broker-b", 3) == -738630097
    tagged = Subscription("RecTopic", "TAG", "TagA || TagB")
    assert bodies._subscription_hash(tagged) == -1961509578
    assert bodies._subscription_hash(Subscription("%RETRY%RecClusterGroup")) == 1154734857


def test_hash_set_order_is_javas() -> None:
    names = ["broker-a", "broker-b", "DefaultCluster", "TBW102", "RecTopic", "%RETRY%G1"]
    assert HashTable().order(names, java_string_hash) == [
        "RecTopic",
        "broker-b",
        "%RETRY%G1",
        "broker-a",
        "TBW102",
        "DefaultCluster",
    ]


# Table length after n distinct keys: (putAll into new ConcurrentHashMap(), one by one into
# new ConcurrentHashMap(), into new ConcurrentHashMap(8), into new HashMap()).
MEASURED = {
    1: (2, 16, 16, 16),
    2: (8, 16, 16, 16),
    5: (16, 16, 16, 16),
    6: (32, 16, 16, 16),
    10: (32, 16, 16, 16),
    11: (64, 16, 16, 16),
    12: (64, 32, 32, 16),
    13: (64, 32, 32, 32),
    21: (64, 32, 32, 32),
    22: (128, 32, 32, 32),
    24: (128, 64, 64, 32),
    25: (128, 64, 64, 64),
    30: (128, 64, 64, 64),
}


@pytest.mark.parametrize(("count", "sizes"), MEASURED.items())
def test_table_sizes_grow_like_javas(count: int, sizes: tuple[int, int, int, int]) -> None:
    put_all = concurrent_put_all(count).final_size(count)
    one_by_one = concurrent_map().final_size(count)
    properties = concurrent_map(8).final_size(count)
    plain = HashTable().final_size(count)
    assert (put_all, one_by_one, properties, plain) == sizes


def test_constructor_capacities() -> None:
    assert (hash_map(1024).size, hash_map(128).size, hash_map(32).size) == (1024, 128, 32)
    assert (concurrent_map(1024).size, concurrent_map(128).size, concurrent_map(8).size) == (
        2048,
        256,
        16,
    )
