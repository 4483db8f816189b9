"""The numbers of the job files checked as they are read: finite, non-negative and within a ceiling;
each value that is not is read as missing and named, per file and field, as a problem.

The job verdicts compare ranks with each other, so one bad value is enough to make them wrong: a NaN
wait poisons every sum it enters, a negative wait makes its rank look last at a collective, a step of
1e15 us makes every other share vanish. Dropping the value leaves the verdict to the values that are
sound (a collective missing one rank's wait is judged on the others) and the problem says what is gone.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from analyzer.ingest.model import Problem

# No step part, op time or link transit of a profiled step lasts a day; sizes and bandwidths far above
# any interconnect are no measurement either.
CEILINGS = {"time_us": 86_400e6, "size_mb": 1e9, "gb_per_s": 1e6, "id": 2**31 - 1, "any": 1e18}


@dataclass(frozen=True)
class Field:
    """One number of a job file: its name as the file writes it, the SQL of its raw text in the raw
    table, its scale to the table's unit, the kind of its ceiling (CEILINGS) and its column in analysis.db
    (the name given to a value of a row whose ``db_table`` is set)."""

    name: str
    raw: str
    scale: float = 1.0
    kind: str = "any"
    db_name: str = ""


def _label(f: Field) -> str:
    """SQL: the field's name as the file of the row writes it."""
    if not f.db_name:
        return f"'{f.name}'"
    return f"CASE WHEN db_table IS NULL THEN '{f.name}' ELSE '{f.db_name}' END"


def _number(f: Field) -> tuple[str, str]:
    """SQL: the field's raw text as a number, and that number in the table's unit."""
    v = f"TRY_CAST({f.raw} AS DOUBLE)"
    return v, v if f.scale == 1 else f"{v} * {f.scale!r}"


def checked(f: Field) -> str:
    """SQL: the field's value in the table's unit, or NULL when it is not a sound number."""
    v, scaled = _number(f)
    return f"(CASE WHEN isfinite({v}) AND {v} >= 0 AND {scaled} <= {CEILINGS[f.kind]!r} THEN {scaled} END)"


def _reason(f: Field) -> str:
    v, scaled = _number(f)
    return (
        f"CASE WHEN trim(CAST({f.raw} AS VARCHAR)) = '' THEN NULL WHEN {v} IS NULL THEN 'are not numbers' "
        f"WHEN NOT isfinite({v}) THEN 'are not finite' WHEN {v} < 0 THEN 'are negative' "
        f"WHEN {scaled} > {CEILINGS[f.kind]!r} THEN 'are beyond any real value' END"
    )


def _any_damaged(con: duckdb.DuckDBPyConnection, table: str, fields: list[Field]) -> bool:
    """Whether a value of ``fields`` in ``table`` has a reason (``_reason``): a sound job, the usual case, is
    answered by one plain scan instead of the grouped union that names each value."""
    # a reason is given exactly to a value that is not blank and that ``checked`` reads as missing
    damaged = " OR ".join(f"(trim(CAST({f.raw} AS VARCHAR)) <> '' AND {checked(f)} IS NULL)" for f in fields)
    return bool(con.execute(f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {damaged} LIMIT 1)").fetchall()[0][0])


def damaged_values(
    con: duckdb.DuckDBPyConnection, table: str, fields: list[Field], place: str, what: str
) -> list[Problem]:
    """One warning per (file, rank, field, reason) of ``table`` (columns path, rank and the raw fields)
    naming how many values were dropped and the first of them; ``place`` is the SQL of where a value
    sits (e.g. its step), ``what`` what the verdicts lose ('the wait of this rank in those collectives')."""
    if not fields or not _any_damaged(con, table, fields):
        return []
    parts = " UNION ALL ".join(
        f"SELECT path, rank, {_label(f)} AS field, CAST({f.raw} AS VARCHAR) AS value, {place} AS place, "
        f"{_reason(f)} AS reason FROM {table} WHERE {f.raw} IS NOT NULL"
        for f in fields
    )
    rows = con.execute(
        f"SELECT path, rank, field, reason, count(*), arg_min(value, place), min(place) FROM ({parts}) "
        "WHERE reason IS NOT NULL GROUP BY ALL ORDER BY rank, path, field, reason"
    ).fetchall()
    return [
        Problem(
            path,
            place,
            "warning",
            f"rank {rank}: {count} value(s) of {field!r} {reason} (the first here: {value!r}): read as "
            f"missing, so the job verdicts leave out {what}",
            "re-export this rank's files; a value the profiler cannot have written means the file was altered",
        )
        for path, rank, field, reason, count, value, place in rows
    ]
