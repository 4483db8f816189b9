"""Map raw CSV headers to normalized columns by name and insert the rows (the text readers' core).

A reader declares its columns as ``Field``s (normalized name, accepted raw headers, how to
convert); ``load_csv_table`` streams each file through ``stream_csv``, picks the first accepted header
present for each field, reports a missing required header once, and inserts ``BY NAME``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from pathlib import Path

import duckdb

from analyzer.ingest import sql_values as v
from analyzer.ingest.csv.csv_anchor import ns_anchor
from analyzer.ingest.csv.csv_source import stream_csv
from analyzer.ingest.inserts import insert_params, insert_sql
from analyzer.ingest.model import ReadContext
from analyzer.ingest.row_checks import drop_duplicate_rows, report_negative_times


@dataclass(frozen=True)
class Field:
    """One normalized column and the raw headers that may hold it (first present wins)."""

    target: str
    headers: tuple[str, ...]
    how: str  # a key of CONVERSIONS
    required: bool = False


def device_id(raw: str) -> str:
    """Device id from '0', 'NPU:0' or 'npu:0'; NULL for 'host', 'CPU', N/A and blanks."""
    return _device_from_text(v.text(raw))


def _device_from_text(t: str) -> str:
    """``device_id`` of the cell's text ``t`` (an SQL expression, ``sql_values.text``)."""
    return (
        f"CASE WHEN regexp_matches({t}, '^\\d+$') THEN TRY_CAST({t} AS INTEGER) "
        f"WHEN regexp_matches(upper({t}), '^NPU\\s*:?\\s*\\d+$') "
        f"THEN TRY_CAST(regexp_extract({t}, '(\\d+)$', 1) AS INTEGER) END"
    )


def kb_to_mb(raw: str) -> str:
    """A KB value converted to MB (KB / 1024)."""
    return f"({v.double(raw)} / 1024.0)"


# The conversions that read the cell's text (``sql_values.text``): how to convert that SQL text expression.
def _from_text(convert: Callable[[str], str], raw: str) -> str:
    return convert(v.text(raw))


FROM_TEXT: dict[str, Callable[[str], str]] = {
    "text": lambda t: t,
    "device": _device_from_text,
    "bool": v.yes_no,
    "unquoted": v.without_quotes,
}
# How to convert a raw text column (by name) to a typed SQL expression; shared with op_summary.
CONVERSIONS: dict[str, Callable[[str], str]] = {
    "int": lambda raw: v.integer(raw, "INTEGER"),
    "bigint": lambda raw: v.integer(raw),
    "ns": v.us_to_ns,
    "double": v.double,
    "kb_to_mb": kb_to_mb,
    **{how: partial(_from_text, f) for how, f in FROM_TEXT.items()},
}


# The SQL type the CSV reader parses a column of each kind as (``csv_source.stream_csv``): a cell that
# does not parse is a row that does not fit the header. The other kinds stay text. Ids and counts are
# parsed as DOUBLE, which holds every id the exports write exactly (all below 2^53; the UINT64 'none'
# sentinel becomes NULL either way) and parses faster than HUGEINT on millions of rows.
PARSED_AS = {"int": "DOUBLE", "bigint": "DOUBLE", "ns": "DECIMAL(38,3)", "double": "DOUBLE", "kb_to_mb": "DOUBLE"}


def column_types(columns: list[str], fields: tuple[Field, ...]) -> dict[str, str]:
    """Header column -> SQL type for every column a field reads as a number."""
    present = set(columns)
    return {h: PARSED_AS[f.how] for f in fields if f.how in PARSED_AS for h in f.headers if h in present}


def convert(how: str, raw: str, anchor_us: Decimal | None = None, trimmed: frozenset[str] = frozenset()) -> str:
    """SQL converting the raw column ``raw`` the ``how`` way (a key of CONVERSIONS); ``anchor_us``
    is where the file's microsecond times lie (``csv_anchor.ns_anchor``), for the ``ns`` one.
    ``trimmed``: the columns ``trimmed_scan`` gives as text in place (read through ``sql_values.trimmed_text``)."""
    if how == "ns":
        return v.us_to_ns(raw, anchor_us)
    if raw in trimmed:
        return FROM_TEXT[how](v.trimmed_text(raw))
    return CONVERSIONS[how](raw)


def text_only(uses: list[tuple[str, str]]) -> frozenset[str]:
    """Of the (raw column, how) conversions of one statement, the columns read as text alone: those
    ``trimmed_scan`` may trim in place."""
    hows: dict[str, set[str]] = {}
    for raw, how in uses:
        hows.setdefault(raw, set()).add(how)
    return frozenset(raw for raw, kinds in hows.items() if kinds <= FROM_TEXT.keys())


def trimmed_scan(trimmed: frozenset[str]) -> str:
    """The ``{scan}`` placeholder with the ``trimmed`` columns' cells as ``sql_values.text`` gives them, in
    place (``sql_values.with_trimmed``). An expression reading a cell's text writes the trim and the N/A test
    out several times (NULLIF repeats its argument): made once below instead, a statement of many text columns
    is planned several times faster, for the same values."""
    return v.with_trimmed("{scan}", trimmed)


def select_rows(
    columns: list[str], fields: tuple[Field, ...], anchor_us: Decimal | None = None, carry: tuple[str, ...] = ()
) -> tuple[str, list[Field]]:
    """The SELECT of every target over the ``{scan}`` placeholder (NULL when no header is present), and
    missing required fields.

    Several fields may share a target (e.g. a MB and a KB header): the first one present wins.
    ``anchor_us`` is where the file's microsecond times lie (``csv_anchor.ns_anchor``); ``carry``: scan
    columns passed through as they are.
    """
    present = set(columns)
    chosen: dict[str, tuple[str, str]] = {}
    wanted: dict[str, list[Field]] = {}
    for field in fields:
        wanted.setdefault(field.target, []).append(field)
        raw = next((h for h in field.headers if h in present), None)
        if raw is not None and field.target not in chosen:
            chosen[field.target] = (raw, field.how)
    trimmed = text_only(list(chosen.values()))
    items: list[str] = [*carry]
    missing: list[Field] = []
    for target, group in wanted.items():
        if target in chosen:
            raw, how = chosen[target]
            items.append(f"{convert(how, raw, anchor_us, trimmed)} AS {target}")
            continue
        # NULL for an absent column, so that derived expressions always bind.
        items.append(f"NULL AS {target}")
        if any(f.required for f in group):
            missing.append(Field(target, tuple(h for f in group for h in f.headers), group[0].how, True))
    return f"SELECT {', '.join(items)} FROM {trimmed_scan(trimmed)}", missing


def file_ns_anchor(first_row: list[str], columns: list[str], fields: tuple[Field, ...]) -> Decimal | None:
    """Where the file's microsecond times (the ``ns`` fields) lie, from its first data row."""
    return ns_anchor(first_row, columns, [h for f in fields if f.how == "ns" for h in f.headers])


def report_missing(ctx: ReadContext, path: Path, missing: list[Field], expected: str) -> None:
    """One problem naming the file and every missing header."""
    names = ", ".join(" or ".join(repr(h) for h in f.headers) for f in missing)
    ctx.report(
        path,
        "line 1",
        "error",
        f"header lacks required column {names}; file skipped",
        f"expected a {expected} header",
    )


@dataclass(frozen=True)
class CsvTarget:
    """How a kind of CSV file fills a normalized table: its fields, the header the problem message says
    was expected, and the ``insert_sql`` constants, derived and replaced columns."""

    table: str
    fields: tuple[Field, ...]
    expected: str
    constants: Mapping[str, object] | None = None
    derived: Mapping[str, str] | None = None
    replaced: Mapping[str, str] | None = None

    def statement(
        self, path: Path, columns: list[str], first_row: list[str], ctx: ReadContext, rows_run: bool = False
    ) -> str | None:
        """The INSERT of a file's rows over the ``{scan}`` placeholder, or None with the missing headers
        reported. ``rows_run``: the scan's rows carry their ``run_id`` (csv_group) instead of ``$run_id``."""
        carry = ("run_id",) if rows_run else ()
        rows, missing = select_rows(columns, self.fields, file_ns_anchor(first_row, columns, self.fields), carry)
        if missing:
            report_missing(ctx, path, missing, self.expected)
            return None
        helpers = list(dict.fromkeys(f.target for f in self.fields if f.target.startswith("_")))
        return insert_sql(self.table, rows, self.constants, self.derived, helpers, self.replaced, rows_run)

    def times(self) -> tuple[str, ...]:
        """The columns whose negative values are named (times and durations)."""
        return tuple(f.target for f in self.fields if f.how == "ns" or f.target.endswith(("dur_us", "duration_us")))


def load_csv_table(
    con: duckdb.DuckDBPyConnection,
    paths: tuple[Path, ...],
    ctx: ReadContext,
    table: str,
    fields: tuple[Field, ...],
    expected: str,
    constants: Mapping[str, object] | None = None,
    derived: Mapping[str, str] | None = None,
    replaced: Mapping[str, str] | None = None,
) -> int:
    """Read CSV files (each slice by its own header) into a normalized table. Returns the rows inserted.

    ``constants`` are bound as parameters (never pasted into SQL); ``derived`` are SQL
    expressions over the converted field names, computed in an outer SELECT; ``replaced``
    likewise, replacing a field's value. Fields named ``_...`` are helpers and are not inserted.
    Rows are converted while DuckDB scans each file (no text copy is kept).
    """
    target = CsvTarget(table, fields, expected, constants, derived, replaced)
    params = insert_params(ctx, constants)
    statement = partial(target.statement, ctx=ctx)
    files = stream_csv(con, paths, ctx, statement, params, lambda columns: column_types(columns, fields))
    if files:
        drop_duplicate_rows(con, ctx, table, files[0].path)
        report_negative_times(con, ctx, table, files[0].path, target.times())
    return sum(f.rows for f in files)
