"""A TAG expression read as Java's ``FilterAPI.buildSubscriptionData`` reads it, in one place
for the rules, the capture and the fake's bodies."""

from __future__ import annotations

import pytest

from rmqlb.client.steps.group import _expressions_differ
from rmqlb.model import Consumer, Subscription
from rmqlb.model.javaorder import filter_tags, java_trim
from rmqlb.remoting import bodies


@pytest.mark.parametrize(
    ("text", "trimmed"),
    [
        (" A ", "A"),
        ("\x00\x01A\x1f ", "A"),  # String.trim: every char up to U+0020, controls included
        ("\xa0A\u2003", "\xa0A\u2003"),  # no-break and em spaces are above U+0020: kept
        ("\x85A", "\x85A"),
        ("\t\n\x0b\x0c\rA", "A"),
        ("", ""),
    ],
)
def test_java_trim_removes_what_string_trim_removes(text: str, trimmed: str) -> None:
    assert java_trim(text) == trimmed


@pytest.mark.parametrize(
    ("expression", "tags"),
    [
        ("*", None),
        ("", None),
        (" * ", ["*"]),  # only exactly "*" is SUB_ALL
        ("A || *", ["A", "*"]),
        ("A||", ["A"]),
        ("||A||||B||", ["A", "B"]),
        ("|||A", ["|A"]),  # "||" split left to right, as Java's split("\\|\\|")
        ("\x01A || \xa0B", ["A", "\xa0B"]),
        (" || ", []),
    ],
)
def test_filter_tags_as_filter_api_builds_them(expression: str, tags: list[str] | None) -> None:
    assert filter_tags(expression) == tags


def test_a_subscriptions_filter_is_its_tags_whatever_their_spelling() -> None:
    same = [Subscription("T", sub_string=e) for e in ("A || B", "B||A", " A||B || A ")]
    assert len({s.filter_key() for s in same}) == 1
    assert Subscription("T", sub_string="A").filter_key() != same[0].filter_key()
    assert Subscription("T", sub_string="*").tags() is None
    sql = Subscription("T", "SQL92", "a > 1")
    assert sql.filter_key() == ("SQL92", "a > 1")


def _consumers(*expressions: str) -> list[Consumer]:
    return [
        Consumer(f"c{i}", subscriptions=(Subscription("T", sub_string=e),))
        for i, e in enumerate(expressions)
    ]


def test_the_capture_reads_brokers_tables_only_for_filters_that_differ() -> None:
    assert not _expressions_differ(_consumers("A || B", "B||A"))
    assert _expressions_differ(_consumers("A", "B"))
    assert _expressions_differ(_consumers("*", " * "))


def test_the_fake_encodes_the_tags_a_java_client_sends() -> None:
    spaced = bodies._subscription_bean(Subscription("T", "TAG", " * ", 1))
    assert spaced["tagsSet"] == ["*"] and spaced["codeSet"] == [bodies.java_string_hash("*")]
    lower = bodies._subscription_bean(Subscription("T", "tag", "A", 1))  # not "TAG": no tags
    assert lower["tagsSet"] == [] and lower["codeSet"] == []
