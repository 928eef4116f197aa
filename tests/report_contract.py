"""The ``rmqlb.report/1`` JSON contract as a schema-like check (exact keys and types).

The contract of the explain issue, plus what ``report_to_json`` documents on top of it:
``topics[].retry``, ``consumers[].lag`` and the top-level ``errors`` list; the lag totals
(``groups[].lag``, ``lagByConsumer``, ``topics[].lag``), each queue's ``offsets`` and each
consumer's address, version, consume status and process queues (``null`` when unknown);
each finding's ``proposals``, ``id`` and ``causedBy`` (the id of an earlier finding of the
same group, or null); ``groups[].inference`` (strategy parameters the wire does not carry).
"""

from __future__ import annotations

from typing import Any

SEVERITIES = {"error", "warning", "info"}
INFERENCE_STATUSES = {"inferred", "confirmed", "assumed", "unexplained", "mixed", "unknown"}
STATUSES = {"ok", "moved", "unconsumed", "duplicate", "unknown"}


def _keys(obj: Any, expected: set[str], where: str) -> None:
    assert isinstance(obj, dict), f"{where}: expected an object, got {type(obj).__name__}"
    assert set(obj) == expected, f"{where}: keys {sorted(obj)} != {sorted(expected)}"


def _opt_int(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _queue_ref(q: Any, where: str) -> None:
    _keys(q, {"brokerName", "queueId"}, where)
    assert isinstance(q["brokerName"], str), where
    assert _int(q["queueId"]), where


def _inference(i: Any, where: str) -> None:
    if i is None:
        return
    keys = {"status", "parameter", "value", "default", "clients", "searched", "alternatives"}
    keys |= {"closest", "differingQueues", "strategyOption", "clientValues", "note"}
    _keys(i, keys, where)
    assert i["status"] in INFERENCE_STATUSES, where
    assert i["parameter"] in ("virtualNodeCnt", "consumeridcs", "config", "rooms"), where
    assert _int(i["clients"]), where
    assert isinstance(i["searched"], str), where
    assert isinstance(i["alternatives"], list), where
    assert _opt_int(i["differingQueues"]), where
    assert i["strategyOption"] is None or isinstance(i["strategyOption"], str), where
    values = i["clientValues"]
    assert (values is None) == (i["status"] != "mixed"), where
    assert values is None or all(isinstance(k, str) for k in values), where
    assert isinstance(i["note"], str) and i["note"], where


def assert_report_contract(doc: Any) -> None:
    """Fail with the JSON path of the first deviation from the contract."""
    _keys(doc, {"format", "groups", "findings", "errors", "exitCode"}, "$")
    assert doc["format"] == "rmqlb.report/1"
    assert doc["exitCode"] in (0, 1, 4), "$.exitCode"
    assert isinstance(doc["groups"], list)
    for gi, g in enumerate(doc["groups"]):
        w = f"$.groups[{gi}]"
        keys = {"group", "messageModel", "strategy", "lag", "lagByConsumer", "inference"}
        _keys(g, keys | {"topics", "lagKnown", "lagComplete"}, w)
        assert _opt_int(g["lag"]) and _opt_int(g["lagKnown"]), w
        assert isinstance(g["lagComplete"], bool), w
        assert g["lag"] == g["lagKnown"] or not g["lagComplete"], w
        assert all(_int(v) for v in g["lagByConsumer"].values()), w
        assert isinstance(g["group"], str), w
        _inference(g["inference"], f"{w}.inference")
        assert g["messageModel"] in ("CLUSTERING", "BROADCASTING"), w
        assert isinstance(g["strategy"], str), w
        assert isinstance(g["topics"], list), w
        for ti, t in enumerate(g["topics"]):
            wt = f"{w}.topics[{ti}]"
            _keys(t, {"topic", "retry", "lag", "queues", "consumers"}, wt)
            assert _opt_int(t["lag"]), wt
            assert isinstance(t["topic"], str), wt
            assert isinstance(t["retry"], bool), wt
            for qi, q in enumerate(t["queues"]):
                wq = f"{wt}.queues[{qi}]"
                _keys(
                    q,
                    {"brokerName", "queueId", "expected", "actual", "status", "lag", "offsets"},
                    wq,
                )
                if q["offsets"] is not None:
                    o = q["offsets"]
                    _keys(o, {"max", "committed", "min", "lagFrom", "lastConsumed"}, wq)
                    assert o["lagFrom"] in ("committed", "min"), wq
                    assert all(_opt_int(o[k]) for k in ("max", "committed", "min")), wq
                    last = o["lastConsumed"]  # one time convention: ISO 8601 UTC
                    assert last is None or (isinstance(last, str) and last.endswith("Z")), wq
                assert isinstance(q["brokerName"], str), wq
                assert _int(q["queueId"]), wq
                assert q["expected"] is None or isinstance(q["expected"], str), wq
                assert q["actual"] is None or (
                    isinstance(q["actual"], list) and all(isinstance(a, str) for a in q["actual"])
                ), wq
                assert q["status"] in STATUSES, wq
                assert _opt_int(q["lag"]), wq
            for ci, c in enumerate(t["consumers"]):
                wc = f"{wt}.consumers[{ci}]"
                _keys(
                    c,
                    {
                        "clientId",
                        "subscribes",
                        "strategy",
                        "expected",
                        "actual",
                        "lag",
                        "clientAddr",
                        "version",
                        "status",
                        "processQueues",
                        "balancedBy",
                        "balancedByInferred",
                    },
                    wc,
                )
                assert c["balancedBy"] in {"client", "broker", "proxy"}, wc
                inferred = c["balancedByInferred"]
                assert inferred is None or (isinstance(inferred, str) and inferred), wc
                assert c["status"] is None or isinstance(c["status"], dict), wc
                assert c["processQueues"] is None or isinstance(c["processQueues"], list), wc
                assert isinstance(c["clientId"], str), wc
                assert isinstance(c["subscribes"], bool), wc
                assert c["strategy"] is None or isinstance(c["strategy"], str), wc
                assert _int(c["expected"]), wc
                assert _opt_int(c["actual"]), wc
                assert _opt_int(c["lag"]), wc
    assert isinstance(doc["findings"], list)
    seen: dict[str, str] = {}  # finding id -> group
    for fi, f in enumerate(doc["findings"]):
        w = f"$.findings[{fi}]"
        _keys(
            f,
            {
                "code", "severity", "group", "topic", "consumers", "queues", "message", "hint",
                "id", "causedBy", "proposals",
            },
            w,
        )  # fmt: skip
        assert f["id"] is None or (isinstance(f["id"], str) and f["id"] not in seen), w
        cause = f["causedBy"]
        assert cause is None or seen.get(cause) == f["group"], f"{w}.causedBy: {cause!r}"
        if f["id"] is not None:
            seen[f["id"]] = f["group"]
        assert isinstance(f["code"], str) and f["code"].isupper(), w
        assert f["severity"] in SEVERITIES, w
        assert isinstance(f["group"], str), w
        assert f["topic"] is None or isinstance(f["topic"], str), w
        assert isinstance(f["consumers"], list), w
        assert all(isinstance(c, str) for c in f["consumers"]), w
        for qi, q in enumerate(f["queues"]):
            _queue_ref(q, f"{w}.queues[{qi}]")
        assert isinstance(f["message"], str) and f["message"], w
        assert isinstance(f["hint"], str), w
        assert isinstance(f["proposals"], list), w
        for pi, p in enumerate(f["proposals"]):
            wp = f"{w}.proposals[{pi}]"
            assert set(p) <= {"queues", "replicas", "vnodes", "strategy", "member", "proof"}, wp
            assert set(p) & {"queues", "replicas", "vnodes", "strategy"}, wp
            assert all(_int(p[k]) for k in ("queues", "vnodes") if k in p), wp
            assert "replicas" not in p or _int(p["replicas"]) or isinstance(p["replicas"], str)
            _keys(p["proof"], {"consumers", "sampled", "minQueues", "maxQueues"}, wp)
    assert isinstance(doc["errors"], list)
    for ei, e in enumerate(doc["errors"]):
        w = f"$.errors[{ei}]"
        _keys(e, {"target", "request", "message"}, w)
        assert all(isinstance(e[k], str) for k in e), w
