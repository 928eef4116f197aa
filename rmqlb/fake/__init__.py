"""A fake RocketMQ cluster (NameServer + brokers) serving a snapshot over the real protocol.

Used by the integration tests, ``rmqlb serve`` and ``rmqlb demo``::

    async with FakeCluster(snapshot, faults=["broker-down=broker-b"]) as fake:
        ...  # point a client at fake.namesrv_addr

    with FakeClusterThread(snapshot) as fake:   # from synchronous code (tests, demo)
        ...
"""

from rmqlb.fake.faults import Faults, FaultSpec, parse_fault
from rmqlb.fake.server import SYSTEM_GROUPS, FakeCluster, LoggedRequest, broker_names, free_port
from rmqlb.fake.thread import FakeClusterThread

__all__ = [
    "SYSTEM_GROUPS",
    "FakeCluster",
    "FakeClusterThread",
    "FaultSpec",
    "Faults",
    "LoggedRequest",
    "broker_names",
    "free_port",
    "parse_fault",
]
