"""SQL expressions that turn raw export text into typed values: N/A and blanks to NULL, exact ns, sentinels.

Only column identifiers (quoted) are put into these expressions, never values.
"""

from __future__ import annotations

UINT32_NONE = 4294967295
UINT64_NONE = 18446744073709551615


def ident(name: str) -> str:
    """A quoted SQL identifier.

    >>> ident('Start Time(us)')
    '"Start Time(us)"'
    """
    return '"' + name.replace('"', '""') + '"'


def text(col: str) -> str:
    """Trimmed text (blanks, TABs, CR, LF), NULL for empty and N/A cells.

    trim() with a set of characters is slow, so it runs only on the cells that start or end with one
    of them (byte compares); plain trim() is no substitute, as it also strips Unicode spaces (U+00A0)."""
    c = f"CAST({ident(col)} AS VARCHAR)"
    edge = " OR ".join(f"starts_with({c}, '{ch}') OR ends_with({c}, '{ch}')" for ch in (" ", "\t", "\r", "\n"))
    return f"NULLIF(NULLIF(CASE WHEN {edge} THEN trim({c}, ' \t\r\n') ELSE {c} END, 'N/A'), '')"


# Numbers are cast straight from the cell: DuckDB's string casts skip surrounding blanks (the
# exports' trailing TABs) and give NULL for 'N/A', empty and other text under TRY_CAST, so the
# trim / NULLIF of text() is not needed there, and the casts stay cheap on millions of rows.


def double(col: str) -> str:
    """A finite DOUBLE, NULL for N/A, blanks, text, NaN and infinities."""
    v = f"TRY_CAST({ident(col)} AS DOUBLE)"
    return f"CASE WHEN isfinite({v}) THEN {v} END"


def integer(col: str, sql_type: str = "BIGINT") -> str:
    """An integer, NULL for N/A, blanks and the UINT32_MAX / UINT64_MAX 'none' sentinels."""
    h = f"TRY_CAST({ident(col)} AS HUGEINT)"
    return f"CASE WHEN {h} IN ({UINT32_NONE}, {UINT64_NONE}) THEN NULL ELSE TRY_CAST({h} AS {sql_type}) END"


def us_to_ns(col: str) -> str:
    """Exact int64 ns from a decimal microsecond string ('1736408883704643.212\\t' -> ...643212)."""
    return f"TRY_CAST(TRY_CAST({ident(col)} AS DECIMAL(38,3)) * 1000 AS BIGINT)"


def unquoted(col: str) -> str:
    """Text with one layer of literal surrounding double quotes removed (msprof's \"\"\"...\"\"\" shapes)."""
    t = text(col)
    return f"NULLIF(CASE WHEN starts_with({t}, '\"') OR ends_with({t}, '\"') THEN trim({t}, '\"') ELSE {t} END, '')"


def boolean_yes_no(col: str) -> str:
    """YES/NO/True/False to BOOLEAN, anything else NULL."""
    t = f"upper({text(col)})"
    return f"CASE WHEN {t} IN ('YES','TRUE','1') THEN TRUE WHEN {t} IN ('NO','FALSE','0') THEN FALSE END"
