"""The fast text helpers of big documents give exactly what the slow, obvious code gives."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from rmqlb.fileio import _has_long_digits
from rmqlb.jsontext import iso_ms

_DIGITS = st.sampled_from("0123456789")


def _strftime(epoch_ms: int) -> str | tuple[str, str]:
    try:
        return datetime.fromtimestamp(epoch_ms // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError, OSError) as exc:
        return type(exc).__name__, str(exc)


def _iso_ms(epoch_ms: int) -> str | tuple[str, str] | None:
    try:
        return iso_ms(epoch_ms)
    except (ValueError, OverflowError, OSError) as exc:
        return type(exc).__name__, str(exc)


@given(
    st.integers(-62_135_596_800_000, 253_402_300_799_999)
    | st.integers(-(2**63), 2**63 - 1)
    | st.sampled_from([0, -1, -1000, -1001, 86_399_999, 86_400_000, -86_400_001])
)
def test_iso_ms_is_strftime(epoch_ms: int) -> None:
    """Every Java long: the same text, or the same error where datetime has none."""
    assert _iso_ms(epoch_ms) == _strftime(epoch_ms)


@given(
    st.lists(
        st.text(max_size=4) | st.text(_DIGITS, min_size=17, max_size=21) | st.sampled_from("٠١߀"),
        max_size=8,
    )
)
def test_long_digit_runs_are_the_regex_runs(parts: list[str]) -> None:
    text = "".join(parts)
    assert _has_long_digits(text) == (re.search(r"[0-9]{19}", text) is not None)


def test_long_digit_runs_across_non_ascii_and_surrogates() -> None:
    assert _has_long_digits("é" + "1" * 19 + "\ud800")
    assert not _has_long_digits("1" * 18 + "é" + "1" * 18)
    assert not _has_long_digits("١" * 19)  # Arabic-Indic digits: JSON numbers are ASCII
