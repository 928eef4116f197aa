"""The RocketMQ remoting protocol as pure functions: bytes <-> typed commands and models.

Layers (lowest first), none of which does I/O:

* :mod:`~rmqlb.remoting.codes` - request/response/language codes, the read-only allowlist;
* :mod:`~rmqlb.remoting.frame` - the frame codec (JSON and binary ``ROCKETMQ`` headers) and
  an incremental, size-bounded :class:`~rmqlb.remoting.frame.FrameDecoder`;
* :mod:`~rmqlb.remoting.fastjson` - RocketMQ's non-standard JSON (bare integer and object
  map keys) read leniently and written byte-compatibly;
* :mod:`~rmqlb.remoting.bodies` - response bodies decoded straight into :mod:`rmqlb.model`
  objects, and the matching encoders used by the fake cluster;
* :mod:`~rmqlb.remoting.acl` - ACL request signing;
* :mod:`~rmqlb.remoting.errors` - the protocol errors, response codes mapped to classes.
"""
