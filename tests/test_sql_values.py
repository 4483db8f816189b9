"""The text conversions of sql_values, run in DuckDB, against a Python statement of what they mean."""

from __future__ import annotations

import functools
from decimal import Decimal

import duckdb
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from analyzer.ingest import sql_values as v
from analyzer.ingest.csv.csv_columns import FROM_TEXT, convert, trimmed_scan

# Cells built from the characters the conversions treat specially, and a few ordinary ones.
CELLS = st.one_of(
    st.text(st.sampled_from(' \t\r\n"N/A,x\u00a0\x01'), max_size=8),
    st.text(max_size=8).filter(lambda s: "\x00" not in s),
)


def expected_text(cell: str) -> str | None:
    """text(): blanks, TABs, CR and LF trimmed at both ends; 'N/A' and empty cells are NULL."""
    trimmed = cell.strip(" \t\r\n")
    return None if trimmed in ("N/A", "") else trimmed


def expected_unquoted(cell: str) -> str | None:
    """unquoted(): text() without the double quotes at its ends; NULL when nothing is left."""
    text = expected_text(cell)
    return None if text is None else (text.strip('"') or None)


@functools.cache
def _duckdb() -> duckdb.DuckDBPyConnection:
    """One connection for every example: the conversions are expressions over their column, and a
    connection costs several times what an example's query does."""
    return duckdb.connect()


def _convert(cells: list[str]) -> list[tuple[str | None, str | None]]:
    rows = "SELECT n, c FROM (SELECT unnest($cells) AS c, unnest(range(len($cells))) AS n)"
    sql = f"SELECT {v.text('c')}, {v.unquoted('c')} FROM ({rows}) ORDER BY n"
    return _duckdb().execute(sql, {"cells": cells}).fetchall()


@settings(max_examples=200, deadline=None)
@pytest.mark.slow
@given(st.lists(CELLS, min_size=1, max_size=20))
@example(['"""32,64"""', '" N/A "', '""', ' "x" ', "N/A", '\t"1;2"\t', '"', "\u00a0x\u00a0", "\x01"])
def test_text_and_unquoted_match_their_definitions(cells):
    assert _convert(cells) == [(expected_text(c), expected_unquoted(c)) for c in cells]


# Cells each text conversion treats specially: blanks and control characters at the ends, N/A,
# quotes, device names, YES/NO.
TRICKY = ['"""32,64"""', '" N/A "', '""', ' "x" ', "N/A", " N/A\t", "", "\t", '\t"1;2"\t', '"', "\u00a0x\u00a0"]
TRICKY += ["\x01", "\x01 7\r\n", "3", " NPU:1 ", "npu 2", "host", "YES", " no\t", "True", "0", None]


@pytest.mark.parametrize("how", sorted(FROM_TEXT))
def test_text_conversions_read_the_same_from_a_trimmed_scan(how):
    """csv_columns.trimmed_scan's way (the cell trimmed once below, then read as trimmed_text) gives the
    value the conversion of the raw cell gives."""
    rows = "(SELECT unnest($cells) AS c, unnest(range(len($cells))) AS n)"
    once = frozenset(["c"])
    raw = f"SELECT n, {convert(how, 'c')} AS v FROM {rows}"
    trimmed = f"SELECT n, {convert(how, 'c', trimmed=once)} AS v FROM {trimmed_scan(once).replace('{scan}', rows)}"
    sql = f"SELECT r.v, t.v FROM ({raw}) r JOIN ({trimmed}) t USING (n) ORDER BY n"
    got = _duckdb().execute(sql, {"cells": TRICKY}).fetchall()
    assert len(got) == len(TRICKY)
    assert [r[0] for r in got] == [r[1] for r in got]


INT64 = (-(2**63), 2**63 - 1)
# Microseconds with three decimals, as integer thousandths: around a profiling epoch, anywhere in
# the DECIMAL(38,3) range, and around the ends of the BIGINT ns range.
MILLI_US = st.one_of(
    st.integers(1_600_000_000_000_000_000, 1_900_000_000_000_000_000),
    st.integers(-(10**35), 10**35),
    st.integers(INT64[0] - 2, INT64[1] + 2),
)
EPOCH = 1_736_408_883_688_177_930


def expected_ns(milli_us: int) -> int | None:
    """decimal_us_to_ns(): the exact ns (thousandths of a microsecond), NULL outside BIGINT."""
    return milli_us if INT64[0] <= milli_us <= INT64[1] else None


@settings(max_examples=100, deadline=None)
@pytest.mark.slow
@given(st.lists(MILLI_US, min_size=1, max_size=20), MILLI_US, st.sampled_from([-1, 0, 1]))
@example([EPOCH, EPOCH + v.NEAR_ANCHOR_US * 1000 - 1, EPOCH - 1], EPOCH, 1)
def test_decimal_us_to_ns_is_exact_whatever_the_anchor(values, anchor_milli, edge):
    """Each value converts exactly, near the anchor (the 64-bit path) or not, whatever the anchor;
    as without one."""
    values = [*values, anchor_milli + edge * v.NEAR_ANCHOR_US * 1000]  # at the window's edge
    texts = [str(Decimal(x).scaleb(-3)) for x in values]  # exact: a decimal string cast to DECIMAL(38,3)
    rows = "SELECT n, us::DECIMAL(38,3) AS us FROM (SELECT unnest($us) AS us, unnest(range(len($us))) AS n)"
    anchor = Decimal(anchor_milli).scaleb(-3)
    sql = f"SELECT {v.decimal_us_to_ns('us', anchor)}, {v.decimal_us_to_ns('us')} FROM ({rows}) ORDER BY n"
    assert _duckdb().execute(sql, {"us": texts}).fetchall() == [(expected_ns(x), expected_ns(x)) for x in values]
