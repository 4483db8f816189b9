"""What an SQLite export must hold for its tasks to be read right, checked by SQL before and after staging:
the core tables, integer times and ids where the export documents them, STRING_IDS entries for the
ids, durations that are not negative. Every gap is a problem naming the table, column and row id;
a row whose time or id is unusable is left out alone, never its whole table."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from analyzer.ingest.model import ReadContext
from analyzer.ingest.row_checks import drop_exact_copies
from analyzer.ingest.sqlite.sqlite_open import ROWID, StagedDb

# table -> column -> what it must hold: 'ns' (a non-negative integer), 'int' (an integer), 'id' (an
# integer id into STRING_IDS). Rows whose 'ns' or 'int' cell is unusable are left out; an 'id' cell holding
# text is kept as that text, and named.
EXPECTED: dict[str, dict[str, str]] = {
    "TASK": {"startNs": "ns", "endNs": "ns", "globalTaskId": "int", "taskType": "id"},
    "COMPUTE_TASK_INFO": {"globalTaskId": "int", "name": "id", "opType": "id", "taskType": "id"},
    "COMMUNICATION_OP": {"startNs": "ns", "endNs": "ns", "opName": "id"},
    "COMMUNICATION_TASK_INFO": {"globalTaskId": "int", "name": "id"},
    "CANN_API": {"startNs": "ns", "endNs": "ns"},
    "PYTORCH_API": {"startNs": "ns", "endNs": "ns"},
    "OVERLAP_ANALYSIS": {"startNs": "ns", "endNs": "ns"},
    "STEP_TIME": {"startNs": "ns", "endNs": "ns"},
}
# Tables without which the export's device tasks cannot be read right.
CORE_TABLES = {
    "TASK": "no device tasks can be read (no ops, no device timeline) from this file",
    "STRING_IDS": "the names and types stored as ids (operator names, op and task types) cannot be decoded",
}
_EXAMPLES = 3


def _integer_text(col: str) -> str:
    """SQLite: a text cell holding a whole integer (what torch_npu writes for some times)."""
    t = f"trim({col})"
    return f"(typeof({col}) = 'text' AND {t} <> '' AND ltrim({t}, '-') NOT GLOB '*[^0-9]*')"


def _unusable(col: str, kind: str) -> str:
    """SQLite condition: the cell cannot be read as its ``kind`` says."""
    quoted = f'"{col}"'
    wrong_type = f"(typeof({quoted}) NOT IN ('integer', 'null') AND NOT {_integer_text(quoted)})"
    if kind == "ns":
        return f"({wrong_type} OR CAST({quoted} AS INTEGER) < 0)"
    if kind == "id":
        return f"(typeof({quoted}) IN ('text', 'real', 'blob') AND NOT {_integer_text(quoted)})"
    return wrong_type


def usable_rows(conn: sqlite3.Connection, path: Path, table: str, columns: list[str], ctx: ReadContext) -> str:
    """The SQLite WHERE condition keeping the rows of ``table`` whose times and ids are usable ('' for
    all), having reported each column's unusable cells with their row ids."""
    checks = EXPECTED.get(table, {})
    dropped = []
    for col, kind in checks.items():
        if col not in columns:
            continue
        condition = _unusable(col, kind)
        found = conn.execute(
            f'SELECT rowid, "{col}" FROM "{table}" WHERE {condition} ORDER BY rowid LIMIT {_EXAMPLES}'
        ).fetchall()
        if not found:
            continue
        count = conn.execute(f'SELECT count(*) FROM "{table}" WHERE {condition}').fetchone()[0]
        _report_cells(path, table, col, kind, count, found, ctx)
        if kind != "id":
            dropped.append(condition)
    return f"NOT ({' OR '.join(dropped)})" if dropped else ""


def _report_cells(path: Path, table: str, col: str, kind: str, count: int, found: list, ctx: ReadContext) -> None:
    examples = ", ".join(f"{value!r} at row {rowid}" for rowid, value in found)
    if kind == "id":
        what, fate = "text, not a STRING_IDS id", "kept as that text"
    elif kind == "ns":
        what, fate = "not an integer in ns since the epoch (text, a fraction, negative or out of range)", "left out"
    else:
        what, fate = "not an integer", "left out"
    ctx.report(
        path,
        f"table {table}, column {col}, row {found[0][0]}",
        "warning" if kind == "id" else "error",
        f"{count} cells are {what} (e.g. {examples}); those rows are {fate}",
        "the database was written by another tool or hand-edited; re-export it",
    )


def report_missing_tables(db: StagedDb, present: set[str], ctx: ReadContext) -> None:
    """One error per core table the export lacks (STRING_IDS only when some id column needs it)."""
    for table, loss in CORE_TABLES.items():
        if table in present:
            continue
        if table == "STRING_IDS" and not _has_integer_ids(db):
            continue
        ctx.report(db.path, f"table {table}", "error", f"no {table} table: {loss}", "re-export the database whole")


def _has_integer_ids(db: StagedDb) -> bool:
    """Whether a staged id column holds integers (ids that only STRING_IDS could decode)."""
    return any(
        kind == "id" and db.has(table, col) and col not in db.text_columns.get(table, set())
        for table, checks in EXPECTED.items()
        for col, kind in checks.items()
    )


def report_unknown_ids(db: StagedDb, ctx: ReadContext) -> None:
    """Ids that STRING_IDS does not hold (their names stay NULL), per column with the first row id."""
    if not db.has("STRING_IDS"):
        return
    for table, checks in EXPECTED.items():
        for col, kind in checks.items():
            if kind == "id" and db.has(table, col):
                id_sql = f'TRY_CAST("{col}" AS BIGINT)'
                _report_rows(
                    db,
                    ctx,
                    table,
                    f'{id_sql} IS NOT NULL AND {id_sql} NOT IN (SELECT id FROM "{db.strings()}")',
                    (f", column {col}", "ids have no STRING_IDS entry; their text stays empty"),
                    "the database is incomplete; re-export it",
                )


def report_negative_durations(db: StagedDb, ctx: ReadContext) -> None:
    """Rows ending before they start (kept, as the CSV and JSON readers keep theirs), with the first row id."""
    for table in ("TASK", "COMMUNICATION_OP"):
        if db.has(table, "startNs", "endNs"):
            _report_rows(
                db,
                ctx,
                table,
                "TRY_CAST(endNs AS BIGINT) < TRY_CAST(startNs AS BIGINT)",
                ("", "rows have a negative duration (endNs before startNs)"),
                "the export is corrupt there",
            )


def _report_rows(db: StagedDb, ctx: ReadContext, table: str, where: str, what: tuple[str, str], hint: str) -> None:
    """One warning when ``where`` holds for staged rows of ``table``: their count and the first one's row
    id; ``what`` is the place after the table name and the problem after the count."""
    sql = f'SELECT count(*), min("{ROWID}") FROM "{db.name(table)}" WHERE {where}'
    count, first = db.con.execute(sql).fetchall()[0]
    if count:
        place, problem = what
        ctx.report(db.path, f"table {table}{place}, row {first}", "warning", f"{count} {problem}", hint)


def drop_duplicate_tasks(db: StagedDb, ctx: ReadContext) -> None:
    """TASK rows repeating another exactly (but for the row id) would be counted twice: dropped, counted."""
    if db.has("TASK", "globalTaskId"):
        drop_exact_copies(
            db.con,
            ctx,
            f'"{db.name("TASK")}"',
            [f'"{c}"' for c in db.tables["TASK"] if c != ROWID and not c.endswith("#text")],
            key=("globalTaskId",),
            order=f'"{ROWID}"',
            place=(db.path, "table TASK"),
            hint="the database holds the same task twice",
        )
