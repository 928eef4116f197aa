"""The live-cluster client: asyncio connections multiplexed by opaque, typed read-only admin
calls, and the concurrent collector that turns a cluster into a snapshot.

* :mod:`~rmqlb.client.connection` - one connection per address, deadlines, TLS, the
  read-only allowlist enforced at the socket write;
* :mod:`~rmqlb.client.admin` - typed admin calls (routes, cluster info, connections, running
  info, consume stats, subscription groups), ACL signing, SYSTEM_BUSY retries;
* :mod:`~rmqlb.client.collector` - :func:`~rmqlb.client.collector.collect`;
* :mod:`~rmqlb.client.errors` - transport errors (response codes map to
  :mod:`rmqlb.remoting.errors`).

Nothing here prints or exits; the CLI (:mod:`rmqlb.cli.live`) runs the collector.
"""
