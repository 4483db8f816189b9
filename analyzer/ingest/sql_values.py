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
    """Trimmed text, NULL for empty and N/A cells (tabs and CR included)."""
    return f"NULLIF(NULLIF(trim(CAST({ident(col)} AS VARCHAR), ' \t\r\n'), 'N/A'), '')"


def double(col: str) -> str:
    """A finite DOUBLE, NULL for N/A, blanks, text, NaN and infinities."""
    v = f"TRY_CAST({text(col)} AS DOUBLE)"
    return f"CASE WHEN isfinite({v}) THEN {v} END"


def integer(col: str, sql_type: str = "BIGINT") -> str:
    """An integer, NULL for N/A, blanks and the UINT32_MAX / UINT64_MAX 'none' sentinels."""
    t = text(col)
    v = f"TRY_CAST(TRY_CAST({t} AS HUGEINT) AS {sql_type})"
    return f"CASE WHEN TRY_CAST({t} AS HUGEINT) IN ({UINT32_NONE}, {UINT64_NONE}) THEN NULL ELSE {v} END"


def us_to_ns(col: str) -> str:
    """Exact int64 ns from a decimal microsecond string ('1736408883704643.212\\t' -> ...643212)."""
    return f"TRY_CAST(TRY_CAST({text(col)} AS DECIMAL(38,3)) * 1000 AS BIGINT)"


def unquoted(col: str) -> str:
    """Text with one layer of literal surrounding double quotes removed (msprof's \"\"\"...\"\"\" shapes)."""
    return f"NULLIF(trim({text(col)}, '\"'), '')"


def boolean_yes_no(col: str) -> str:
    """YES/NO/True/False to BOOLEAN, anything else NULL."""
    t = f"upper({text(col)})"
    return f"CASE WHEN {t} IN ('YES','TRUE','1') THEN TRUE WHEN {t} IN ('NO','FALSE','0') THEN FALSE END"
