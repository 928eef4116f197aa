"""CI outputs: JUnit XML (one testcase per group x topic) and GitHub Actions annotations."""

from __future__ import annotations

import os.path
import xml.etree.ElementTree as ET

from rmqlb.check.rules import CheckFinding, CheckResult
from rmqlb.diagnose.report import Severity
from rmqlb.failon import FailOn
from rmqlb.render.safe import safe

TOPICS_CLASS = "(topics)"
"""JUnit class of the cases about a topic's own configuration."""
ANNOTATION_LEVEL = {Severity.error: "error", Severity.warning: "warning", Severity.info: "notice"}


def _line(f: CheckFinding) -> str:
    return f"{f.loc}: {f.severity.value} {f.code}: {f.message}\n    hint: {f.hint}"


def junit_xml(result: CheckResult, fail_on: str = "warning") -> str:
    """JUnit XML: a testcase per group x topic (``(group)`` for group-level findings) and per
    topic (class ``(topics)``, for the topic's own configuration); it
    fails when one of its findings is at least ``fail_on`` severe, and lists the others in
    ``system-out``. Groups no config declares members for are ``skipped``. Control
    characters in names are made visible (XML 1.0 cannot hold most of them at all)."""
    result = safe(result)
    rule = FailOn(fail_on)
    suites = ET.Element("testsuites", name="rmqlb check")
    suite = ET.SubElement(suites, "testsuite", name="rmqlb check")
    failures = skipped = 0
    for case in result.cases:
        name = case.topic if case.topic is not None else "(group)"
        element = ET.SubElement(
            suite,
            "testcase",
            classname=case.group if case.group is not None else TOPICS_CLASS,
            name=name,
            file=case.loc.file,
            line=str(case.loc.line),
        )
        failing = [f for f in case.findings if rule.fails(f.severity)]
        others = [f for f in case.findings if not rule.fails(f.severity)]
        if case.skipped:
            skipped += 1
            message = case.findings[0].message if case.findings else "not checked"
            ET.SubElement(element, "skipped", message=message)
        elif failing:
            failures += 1
            first = failing[0]
            failure = ET.SubElement(
                element,
                "failure",
                type=first.code,
                message=f"{first.loc}: {first.message}"
                + (f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""),
            )
            failure.text = "\n".join(_line(f) for f in failing)
        if others:
            ET.SubElement(element, "system-out").text = "\n".join(_line(f) for f in others)
    for node in (suites, suite):
        node.set("tests", str(len(result.cases)))
        node.set("failures", str(failures))
        node.set("errors", "0")
    suite.set("skipped", str(skipped))
    ET.indent(suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _repo_path(file: str, workspace: str | None) -> str:
    """GitHub matches annotations by path from the repository root: make absolute paths
    inside ``workspace`` relative to it."""
    if workspace and os.path.isabs(file):
        relative = os.path.relpath(file, workspace)
        if not relative.startswith(".."):
            return relative.replace(os.sep, "/")
    return file


def github_annotations(result: CheckResult, workspace: str | None = None) -> list[str]:
    """``::error file=F,line=L,title=T::message`` workflow commands, one per finding
    (``::warning`` and ``::notice`` for the lower severities). ``workspace`` is the checkout
    (``GITHUB_WORKSPACE``) that absolute file names are made relative to. Control characters
    in names are made visible before the workflow-command escaping."""
    result = safe(result)
    out = []
    for f in result.findings:
        props = ",".join(
            (
                f"file={_escape_property(_repo_path(f.loc.file, workspace))}",
                f"line={f.loc.line}",
                f"title={_escape_property(f'rmqlb {f.code} ({f.group or f.topic})')}",
            )
        )
        message = _escape_data(f"{f.message}\nfix: {f.hint}")
        out.append(f"::{ANNOTATION_LEVEL[f.severity]} {props}::{message}")
    return out
