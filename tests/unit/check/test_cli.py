"""``rmqlb check`` end to end, in-process: formats, exit codes, JUnit, annotations."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rmqlb.cli import run

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples/check"
ALL_YAML = sorted(str(p) for p in EXAMPLES.glob("*.yaml"))
CLEAN = str(EXAMPLES / "clean.yaml")
IMBALANCE = str(EXAMPLES / "imbalance.yaml")
SEED_001 = str(EXAMPLES / "subscription-inconsistent.yaml")


@pytest.fixture(autouse=True)
def _no_ci_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


@pytest.mark.parametrize("fmt", ["table", "plain", "markdown", "json"])
def test_clean_passes_in_every_format(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check", "-o", fmt, CLEAN]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        doc = json.loads(out)
        assert doc["findings"] == [] and doc["exitCode"] == 0
        assert {c["status"] for c in doc["cases"]} == {"passed"}
    else:
        assert "no findings (exit 0)" in out


@pytest.mark.parametrize("fmt", ["table", "plain", "markdown", "json"])
def test_bad_examples_fail_with_file_and_line(
    fmt: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # wide enough for the longest file:line of the clone, wherever it lives: a folded cell
    # pads its lines and splits the path with spaces
    monkeypatch.setenv("COLUMNS", "400")
    assert run(["check", "-o", fmt, *ALL_YAML]) == 1
    out = capsys.readouterr().out
    seed = str(EXAMPLES / "subscription-inconsistent.yaml")
    if fmt == "json":
        doc = json.loads(out)
        assert doc["format"] == "rmqlb.check/1"
        assert doc["exitCode"] == 1
        assert set(doc) == {"format", "files", "findings", "cases", "exitCode", "allocations"}
        assert set(doc["findings"][0]) == {
            "code", "severity", "file", "line", "group", "topic", "consumerCounts",
            "consumers", "queues", "message", "hint", "proposals", "id", "causedBy",
        }  # fmt: skip
        assert set(doc["cases"][0]) == {
            "group", "topic", "file", "line", "consumerCounts", "status", "findings",
        }  # fmt: skip
        hits = [f for f in doc["findings"] if f["code"] == "SUBSCRIPTION_INCONSISTENT"]
        assert {(f["file"], f["line"]) for f in hits} == {(seed, 19), (seed, 20)}
        assert all(f["severity"] == "error" for f in hits)
    else:
        assert f"{seed}:19" in out.replace("\n", "") or f"{seed}:19" in out
        assert "SUBSCRIPTION_INCONSISTENT" in out
        assert "IDLE_CONSUMER" in out


def test_plain_lines_are_compiler_style(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check", "-o", "plain", IMBALANCE]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(
        f"{IMBALANCE}:5: warning IMBALANCE InvoiceGroup/InvoiceTopic (InvoiceGroup/F1): "
    )


def test_fail_on(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check", "-o", "plain", "--fail-on", "error", IMBALANCE]) == 0
    assert run(["check", "-o", "plain", "--fail-on", "warning", IMBALANCE]) == 1
    assert run(["check", "-o", "plain", "--fail-on", "never", SEED_001]) == 0
    assert run(["check", "-o", "plain", "--fail-on", "error", SEED_001]) == 1
    assert run(["check", "-o", "plain", "--max-imbalance", "2", IMBALANCE]) == 0
    capsys.readouterr()


def test_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "junit.xml"
    assert run(["check", "-o", "plain", "--junit", str(report), *ALL_YAML]) == 1
    capsys.readouterr()
    root = ET.parse(report).getroot()
    cases = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    assert ("GroupA", "TopicA") in cases and ("OrderGroup", "OrderTopic") in cases
    assert cases[("OrderGroup", "OrderTopic")].find("failure") is None
    failure = cases[("GroupA", "TopicA")].find("failure")
    assert failure is not None
    assert failure.get("type") in {"SUBSCRIPTION_INCONSISTENT", "UNCONSUMED_QUEUE"}
    assert "subscription-inconsistent.yaml:19" in (failure.text or "")
    assert cases[("ReportGroup", "(group)")].find("failure") is not None
    suite = root.find("testsuite")
    assert suite is not None and int(suite.get("failures", "0")) >= 7


def test_junit_unwritable_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing-dir" / "junit.xml"
    assert run(["check", "-o", "plain", "--junit", str(target), CLEAN]) == 2
    err = capsys.readouterr().err
    assert "--junit" in err and "cannot write" in err and err.count("\n") == 1


def test_github_annotations(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(ROOT))
    seed = "examples/check/subscription-inconsistent.yaml"
    imbalance = "examples/check/imbalance.yaml"
    assert run(["check", "-o", "plain", SEED_001, IMBALANCE]) == 1
    out = capsys.readouterr().out.splitlines()
    annotations = [line for line in out if line.startswith("::")]
    assert (
        f"::error file={seed},line=19,title=rmqlb SUBSCRIPTION_INCONSISTENT (GroupA)::"
        in "\n".join(annotations)
    )
    assert any(a.startswith(f"::warning file={imbalance},line=5,") for a in annotations)
    # with JSON output the annotations go to stderr so stdout stays parseable
    assert run(["check", "-o", "json", IMBALANCE]) == 1
    captured = capsys.readouterr()
    json.loads(captured.out)
    assert captured.err.startswith(f"::warning file={imbalance},line=5,")


def test_github_job_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert run(["check", "-o", "plain", IMBALANCE]) == 1
    capsys.readouterr()
    text = summary.read_text()
    assert text.startswith("## rmqlb check")
    assert f"`{IMBALANCE}:5`" in text


def test_no_annotations_outside_actions(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check", "-o", "plain", IMBALANCE]) == 1
    assert "::warning" not in capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["table", "plain", "markdown", "json"])
def test_explain_counts(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check", "-o", fmt, "--explain-counts", str(EXAMPLES / "idle-consumers.yaml")]) == 1
    out = capsys.readouterr().out
    if fmt == "json":
        (table,) = json.loads(out)["allocations"]
        counts = [c["consumers"] for c in table["counts"]]
        assert counts == list(range(16, 25))
        at_17 = table["counts"][1]["assignments"]
        assert len(at_17) == 17
        assert sorted(len(q) for q in at_17.values()) == [0] + [1] * 16
    else:
        assert "ShipmentGroup / ShipmentTopic: 16 readable queues" in out
        assert "24 consumers" in out
        assert "10.1.0.23@shipment-service-23" in out


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            "groups:\n  G:\n    members:\n      a:\n"
            "        replicas: 5..2\n        subscriptions: {}\n",
            ":5: ",
        ),
        ("topics:\n  T: {queues: 4, colour: red}\n", ":2: topics.T.colour: unknown key"),
        ("topics: [\n", ":2: invalid YAML"),
        ("topics:\n  T:\n    queues: many\n", ":3: topics.T.queues: expected an integer"),
    ],
)
def test_bad_input_exit_2_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, expected: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    assert run(["check", "-o", "plain", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"rmqlb: error: {path}{expected}")
    assert "Traceback" not in captured.err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check"]) == 2
    assert run(["check", "--max-imbalance", "0.5", CLEAN]) == 2
    assert run(["check", "-o", "xml", CLEAN]) == 2
    capsys.readouterr()


def test_help_does_not_import_heavy_modules() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from rmqlb.cli import run; run(['check', '--help']); "
        "heavy = ('yaml', 'tabulate', 'rmqlb.check'); "
        "bad = [m for m in heavy if m in sys.modules]; "
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_a_cluster_exports_summed_counts_get_cluster_wide_fixes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``mqadmin exportMetadata -c`` sums each topic's counts over the masters (a real 5.1.4
    export's shape): no fix names a broker address it cannot know, nor a per-broker count
    that is really a cluster total."""
    config = {"attributes": {}, "order": False, "perm": 6, "topicFilterType": "SINGLE_TAG",
              "topicSysFlag": 0}  # fmt: skip
    export = {
        "exportTime": 1795959760756,
        "topicConfigTable": {
            "WideTopic": {
                **config,
                "topicName": "WideTopic",
                "readQueueNums": 4,
                "writeQueueNums": 8,
            },
            "CartTopic": {
                **config,
                "topicName": "CartTopic",
                "readQueueNums": 16,
                "writeQueueNums": 16,
            },
        },
        "subscriptionGroupTable": {"CartGroup": {"groupName": "CartGroup", "consumeEnable": True}},
    }
    metadata = tmp_path / "metadata.json"
    metadata.write_text(json.dumps(export, indent=1), encoding="utf-8")
    members = tmp_path / "members.yaml"
    members.write_text(
        "version: 1\ngroups:\n  CartGroup:\n    members:\n      cart:\n        replicas: 3..20\n"
        "        subscriptions:\n          CartTopic: '*'\n",
        encoding="utf-8",
    )
    assert run(["check", "-o", "json", str(metadata), str(members)]) == 1
    findings = {f["code"]: f for f in json.loads(capsys.readouterr().out)["findings"]}
    write = findings["WRITE_EXCEEDS_READ"]
    assert "summed over the cluster's masters" in write["message"]
    assert "mqadmin updateTopic -c <cluster> -t WideTopic -r W -w W" in write["hint"]
    assert "address>" not in write["hint"]
    idle = findings["IDLE_CONSUMER"]["hint"]
    assert "of CartTopic to 20 in all, over the cluster's masters" in idle
