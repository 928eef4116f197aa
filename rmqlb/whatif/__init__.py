"""What-if allocation, beside :mod:`rmqlb.allocate`: what a strategy does to a group that
does not exist yet, or to the running one when consumers, queues or the strategy change.
Pure: no I/O, no terminal; ``rmqlb simulate`` parses its options, reads files and hands
over, and :mod:`rmqlb.render.simulate` lays the results out.

::

    inputs.py     synthetic groups (brokers, queues, client ids), --config lists, --rooms
    measure.py    how an allocation spreads queues; which queues move between two
    events.py     one what-if: a scale event (+N, -id) and the strategy comparison
    steps.py      step by step: consumers, then the queue count, then the strategy
    cases.py      simulate's cases: from flags or --input JSON, and simulating them
    running.py    the what-if of a running group (--dump, -n, --check-config)
    documents.py  the JSON documents of simulate --output json

The package imports nothing at start-up: ``rmqlb --help`` never loads it.

Worked example: 8 queues and three AVG consumers hold 3, 3 and 2; when a fourth joins
(2 each), 5 of the 8 queues change owner::

    >>> from rmqlb.model.strategy import Avg
    >>> from rmqlb.whatif.events import what_if
    >>> from rmqlb.whatif.inputs import default_consumer_ids, make_queues
    >>> qs, cids = make_queues("T", ["broker-a"], 8), default_consumer_ids(3)
    >>> result = what_if(Avg(), qs, cids, add=default_consumer_ids(1, start=3))
    >>> [len(q) for q in result.assignment.values()], result.scale.moves.count
    ([3, 3, 2], 5)
"""
