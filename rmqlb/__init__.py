"""rmqlb: diagnostics for Apache RocketMQ consumer load balancing.

The pure core is importable without any I/O:

>>> from rmqlb.model import MessageQueue
>>> from rmqlb.model.strategy import Avg
>>> from rmqlb.allocate import allocate
>>> queues = [MessageQueue("T", "broker-a", i) for i in range(3)]
>>> {cid: [q.queue_id for q in qs] for cid, qs in allocate(Avg(), queues, ["c2", "c1"]).items()}
{'c1': [0, 1], 'c2': [2]}
"""

from rmqlb._deferred import defer_dataclass_methods

defer_dataclass_methods()  # before any module of the package makes a dataclass

__version__ = "0.1.0"

__all__ = ["__version__"]
