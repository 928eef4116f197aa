"""JUnit XML and GitHub Actions annotations from a hand-built result (no engine needed)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from rmqlb.check.decl import CheckConfig, Loc
from rmqlb.check.rules import CaseResult, CheckFinding, CheckResult, sort_check_findings
from rmqlb.diagnose.report import Severity
from rmqlb.render.ci import github_annotations, junit_xml

ERR = CheckFinding(
    code="WRITE_EXCEEDS_READ",
    severity=Severity.error,
    loc=Loc("cfg/a.yaml", 7),
    group="G",
    topic="T",
    message="T on broker-a has writeQueueNums 16 > readQueueNums 8, 50% lost",
    hint="raise readQueueNums to 16",
)
WARN = CheckFinding(
    code="IDLE_CONSUMER",
    severity=Severity.warning,
    loc=Loc("cfg/a.yaml", 12),
    group="G",
    topic="U",
    message="with >= 17 consumers: 16 queues for 17 consumers",
    hint="cap replicas at 16",
    counts=(17, 18),
)
INFO = CheckFinding(
    code="NO_CONSUMERS",
    severity=Severity.info,
    loc=Loc("subscriptionGroup.json", 40),
    group="Legacy",
    topic=None,
    message="group Legacy exists on the broker but no config declares its members: not checked",
    hint="declare it",
)


def result() -> CheckResult:
    cases = (
        CaseResult("G", "T", Loc("cfg/a.yaml", 5), (1, 2), (ERR,)),
        CaseResult("G", "U", Loc("cfg/a.yaml", 5), (1, 2), (WARN,)),
        CaseResult("G", "V", Loc("cfg/a.yaml", 5), (1, 2), ()),
        CaseResult("Legacy", None, Loc("subscriptionGroup.json", 40), (), (INFO,), skipped=True),
    )
    findings = tuple(sort_check_findings([INFO, WARN, ERR]))
    return CheckResult(CheckConfig(files=("cfg/a.yaml",)), findings, cases)


def cases_by_name(xml: str) -> dict[tuple[str, str], ET.Element]:
    root = ET.fromstring(xml)
    assert root.tag == "testsuites"
    return {(c.get("classname", ""), c.get("name", "")): c for c in root.iter("testcase")}


def test_junit_one_testcase_per_group_and_topic() -> None:
    xml = junit_xml(result(), "warning")
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(xml)
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "2", "1")
    cases = cases_by_name(xml)
    assert set(cases) == {("G", "T"), ("G", "U"), ("G", "V"), ("Legacy", "(group)")}
    failure = cases[("G", "T")].find("failure")
    assert failure is not None
    assert failure.get("type") == "WRITE_EXCEEDS_READ"
    assert failure.get("message", "").startswith("cfg/a.yaml:7: ")
    assert "cfg/a.yaml:7: error WRITE_EXCEEDS_READ" in (failure.text or "")
    assert cases[("G", "U")].find("failure") is not None
    assert cases[("G", "V")].find("failure") is None
    assert cases[("Legacy", "(group)")].find("skipped") is not None
    assert cases[("G", "T")].get("file") == "cfg/a.yaml"
    assert cases[("G", "T")].get("line") == "5"


def test_junit_fail_on_error_moves_warnings_to_system_out() -> None:
    cases = cases_by_name(junit_xml(result(), "error"))
    idle = cases[("G", "U")]
    assert idle.find("failure") is None
    out = idle.find("system-out")
    assert out is not None and "IDLE_CONSUMER" in (out.text or "")
    assert cases[("G", "T")].find("failure") is not None


def test_annotations_escape_and_level() -> None:
    lines = github_annotations(result())
    assert lines[0] == (
        "::error file=cfg/a.yaml,line=7,title=rmqlb WRITE_EXCEEDS_READ (G)::"
        "T on broker-a has writeQueueNums 16 > readQueueNums 8, 50%25 lost"
        "%0Afix: raise readQueueNums to 16"
    )
    assert lines[1].startswith("::warning file=cfg/a.yaml,line=12,title=rmqlb IDLE_CONSUMER (G)::")
    assert lines[2].startswith("::notice file=subscriptionGroup.json,line=40,")
    assert all("\n" not in line for line in lines)


def test_exit_code_follows_fail_on() -> None:
    r = result()
    assert r.exit_code("error") == 1
    assert r.exit_code("warning") == 1
    assert r.exit_code("never") == 0
    only_info = CheckResult(r.config, (INFO,), r.cases)
    assert only_info.exit_code("warning") == 0


def test_annotations_use_repository_paths(tmp_path: Path) -> None:
    inside = tmp_path / "deploy" / "rmqlb.yaml"
    finding = CheckFinding(
        code="IMBALANCE",
        severity=Severity.warning,
        loc=Loc(str(inside), 3),
        group="G",
        topic="T",
        message="m",
        hint="h",
    )
    r = CheckResult(CheckConfig(), (finding,), ())
    (line,) = github_annotations(r, str(tmp_path))
    assert line.startswith("::warning file=deploy/rmqlb.yaml,line=3,")
    (line,) = github_annotations(r, str(tmp_path / "elsewhere"))
    assert f"file={str(inside).replace(':', '%3A').replace(',', '%2C')}," in line
