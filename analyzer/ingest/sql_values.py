"""SQL expressions that turn raw export text into typed values: N/A and blanks to NULL, exact ns, sentinels.

Only column identifiers (quoted) are put into these expressions, never values.
"""

from __future__ import annotations

from decimal import Decimal

UINT32_NONE = 4294967295
UINT64_NONE = 18446744073709551615


def in_list(column: str, param: str = "?") -> str:
    """A WHERE condition: ``column`` is one of the VARCHAR list parameter ``param`` (``?`` or ``$name``)."""
    return f"{column} IN (SELECT unnest({param}::VARCHAR[]))"


# The rows of the runs of the parameter $runs (a WHERE condition), for statements over many runs at once.
IN_RUNS = in_list("run_id", "$runs")

# The timeline events of a pid without process_name metadata (a WHERE condition): kept as kind 'other', said.
UNNAMED_PROCESS = "process IS NULL AND kind <> 'flow'"


def ident(name: str) -> str:
    """A quoted SQL identifier.

    >>> ident('Start Time(us)')
    '"Start Time(us)"'
    """
    return '"' + name.replace('"', '""') + '"'


def text(col: str) -> str:
    """Trimmed text (blanks, TABs, CR, LF), NULL for empty and N/A cells.

    trim() with a set of characters is slow, so it runs only on the cells whose first or last
    character is a control character or a blank (``ascii`` of the cell and of its reverse: two integer
    compares, 2x cheaper than eight starts_with/ends_with); plain trim() is no substitute, as it also
    strips Unicode spaces (U+00A0) and keeps TABs."""
    return _na_null(edge_trimmed(col))


def edge_trimmed(col: str) -> str:
    """The cell as text without the blanks, TABs, CR and LF at its ends (``text`` before its N/A test)."""
    c = f"CAST({ident(col)} AS VARCHAR)"
    return f"CASE WHEN {_edge(c, '<= 32')} THEN trim({c}, ' \t\r\n') ELSE {c} END"


def with_trimmed(relation: str, columns: list[str] | frozenset[str]) -> str:
    """``relation`` (SQL text of a table or subquery) with the cells of ``columns`` as ``text`` gives them, in
    place, for expressions that read them through ``trimmed_text``: ``edge_trimmed`` in one SELECT, N/A and empty
    cells made NULL in the one above it. In one expression, each NULLIF writes its argument out again (DuckDB
    binds it as a CASE), and a conversion reading the text several times (``without_quotes``) multiplies that:
    written out there, a statement of many text columns is planned several times slower and each row evaluates
    the copies.

    >>> with_trimmed("t", [])
    't'
    """
    if not columns:
        return relation
    trimmed = ", ".join(f"{edge_trimmed(c)} AS {ident(c)}" for c in sorted(columns))
    nulled = ", ".join(f"{_na_null(ident(c))} AS {ident(c)}" for c in sorted(columns))
    return f"(SELECT * REPLACE ({nulled}) FROM (SELECT * REPLACE ({trimmed}) FROM {relation}))"


def trimmed_text(col: str) -> str:
    """``text`` of a column that already holds it (made in the SELECTs ``with_trimmed`` adds below, once, where
    the expressions reading the text would each write it out again)."""
    return ident(col)


def _na_null(text_sql: str) -> str:
    return f"NULLIF(NULLIF({text_sql}, 'N/A'), '')"


def _edge(c: str, test: str) -> str:
    """True when the code point of the first or of the last character of ``c`` passes ``test``."""
    return f"(ascii({c}) {test} OR ascii(reverse({c})) {test})"


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


def us_to_ns(col: str, anchor_us: Decimal | None = None) -> str:
    """Exact int64 ns from a decimal microsecond string ('1736408883704643.212\\t' -> ...643212);
    ``anchor_us``: see ``decimal_us_to_ns``."""
    return decimal_us_to_ns(f"TRY_CAST({ident(col)} AS DECIMAL(38,3))", anchor_us)


# The microseconds whose nanoseconds fit BIGINT; outside them there is no ns value (NULL).
_NS_RANGE_US = ("-9223372036854775.808", "9223372036854775.807")
# How far from the anchor a value takes the 64-bit path: 1e15 ns, well below the 2^51 ns up to
# which a double times 1000 rounds back to the exact integer.
NEAR_ANCHOR_US = 10**12
# Anchors this far inside the BIGINT range leave the whole window inside it.
_ANCHOR_LIMIT_US = 9 * 10**15


def decimal_us_to_ns(us_sql: str, anchor_us: Decimal | int | None = None) -> str:
    """Exact int64 ns from a DECIMAL(38,3) microsecond expression; NULL outside the BIGINT range.

    ``CAST(us * 1000 AS BIGINT)`` divides a 128-bit integer by the scale, which is slow on millions
    of values. Given ``anchor_us``, any microsecond value of
    the same trace (e.g. its first), values within NEAR_ANCHOR_US of it are computed from their
    difference to it, which fits DECIMAL(18,3) (a 64-bit integer) and whose double times 1000
    rounds back to the exact integer: much cheaper. The others take the 128-bit path, so any anchor
    gives the same values."""
    lo, hi = (f"{bound}::DECIMAL(38,3)" for bound in _NS_RANGE_US)
    exact = f"WHEN {us_sql} BETWEEN {lo} AND {hi} THEN TRY_CAST({us_sql} * 1000 AS BIGINT)"
    if anchor_us is None or abs(Decimal(anchor_us)) > _ANCHOR_LIMIT_US:
        return f"CASE {exact} END"
    anchor = Decimal(anchor_us).quantize(Decimal("0.001"))
    near_lo, near_hi = (f"{anchor + d}::DECIMAL(38,3)" for d in (-NEAR_ANCHOR_US, NEAR_ANCHOR_US))
    offset = f"CAST({us_sql} - {anchor}::DECIMAL(38,3) AS DECIMAL(18,3))"
    near = (
        f"WHEN {us_sql} > {near_lo} AND {us_sql} < {near_hi} "
        f"THEN {int(anchor * 1000)} + CAST(round(CAST({offset} AS DOUBLE) * 1000) AS BIGINT)"
    )
    return f"CASE {near} {exact} END"


def unquoted(col: str) -> str:
    """Text without the literal double quotes around it (msprof's \"\"\"...\"\"\" shapes); NULL when
    nothing is left."""
    return without_quotes(text(col))


def without_quotes(text_sql: str) -> str:
    """``text_sql`` (an SQL text expression, e.g. ``text(col)``) without the quotes at its ends.

    trim() with a set of characters is slow, so it runs only on the cells holding a quote (contains() is
    a plain byte search); trim() of a cell without one would return it unchanged. A CASE testing the
    edges for a quote instead would cost more than the trim it saves."""
    return f"NULLIF(CASE WHEN contains({text_sql}, '\"') THEN trim({text_sql}, '\"') ELSE {text_sql} END, '')"


def yes_no(text_sql: str) -> str:
    """An SQL text expression's YES/NO/True/False/1/0 (any case) as BOOLEAN, anything else NULL."""
    t = f"upper({text_sql})"
    return f"CASE WHEN {t} IN ('YES','TRUE','1') THEN TRUE WHEN {t} IN ('NO','FALSE','0') THEN FALSE END"
