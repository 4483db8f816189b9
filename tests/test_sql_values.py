"""The text conversions of sql_values, run in DuckDB, against a Python statement of what they mean."""

from __future__ import annotations

import duckdb
from hypothesis import example, given, settings
from hypothesis import strategies as st

from analyzer.ingest import sql_values as v

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


def _convert(cells: list[str]) -> list[tuple[str | None, str | None]]:
    con = duckdb.connect()
    con.execute('CREATE TABLE t (n INTEGER, "c" VARCHAR)')
    con.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(cells)))
    return con.execute(f"SELECT {v.text('c')}, {v.unquoted('c')} FROM t ORDER BY n").fetchall()


@settings(max_examples=200, deadline=None)
@given(st.lists(CELLS, min_size=1, max_size=20))
@example(['"""32,64"""', '" N/A "', '""', ' "x" ', "N/A", '\t"1;2"\t', '"', "\u00a0x\u00a0", "\x01"])
def test_text_and_unquoted_match_their_definitions(cells):
    assert _convert(cells) == [(expected_text(c), expected_unquoted(c)) for c in cells]
