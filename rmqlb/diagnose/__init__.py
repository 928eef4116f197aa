"""Diagnosis: expected (allocate) vs actual (what clients hold), and findings. Pure.

>>> from rmqlb.snapshot import parse_snapshot
>>> snap = parse_snapshot({"format": "rmqlb.snapshot/1", "topics": {"T": {"queues": 1}},
...     "groups": {"G": {"consumers": [{"clientId": "c1", "subscriptions": ["T"]},
...                                    {"clientId": "c2", "subscriptions": ["T"]}]}}})
>>> [f.code.value for f in diagnose(snap).findings]
['IDLE_CONSUMER']
"""

from rmqlb.diagnose.context import DiagnoseOptions
from rmqlb.diagnose.engine import diagnose, record_inferred
from rmqlb.diagnose.report import (
    Code,
    ConsumerRow,
    Finding,
    GroupReport,
    InferenceStatus,
    QueueRow,
    QueueStatus,
    Report,
    Severity,
    StrategyInference,
    TopicReport,
    exit_code,
    report_to_json,
    report_to_text,
    sort_findings,
)

__all__ = [
    "Code",
    "ConsumerRow",
    "DiagnoseOptions",
    "Finding",
    "GroupReport",
    "InferenceStatus",
    "QueueRow",
    "QueueStatus",
    "Report",
    "Severity",
    "StrategyInference",
    "TopicReport",
    "diagnose",
    "exit_code",
    "record_inferred",
    "report_to_json",
    "report_to_text",
    "sort_findings",
]
