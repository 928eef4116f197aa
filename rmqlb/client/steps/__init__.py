"""The collection steps: one module per kind of data the collector asks for.

* :mod:`~rmqlb.client.steps.discovery` - which groups (named, configured, consuming a topic);
* :mod:`~rmqlb.client.steps.configs` - each broker's subscription-group configs;
* :mod:`~rmqlb.client.steps.routes` - topic routes from the NameServer;
* :mod:`~rmqlb.client.steps.connections` - each broker's connection list for a group, united;
* :mod:`~rmqlb.client.steps.running` - each client's running info, relayed by a broker;
* :mod:`~rmqlb.client.steps.offsets` - consume stats, topic min/max and committed offsets;
* :mod:`~rmqlb.client.steps.group` - one group's capture, assembled from the steps above.

Each step sends its requests through the :class:`~rmqlb.client.collector.Collector` it is
given (semaphore, deadline, errors). A new request adds its code to the allowlist, its body
decoder, one step here and its answer to the fake.
"""
