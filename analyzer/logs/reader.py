"""Read the log files of a folder into log_files / log_events, batch by batch, the parsing done by DuckDB."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import duckdb

from analyzer.errors import first_line
from analyzer.ingest.schema import tables_for_scope
from analyzer.logs.knowledge import activity_patterns, create_knowledge, match_expression
from analyzer.logs.layout import LogFile, scan_log_folder
from analyzer.logs.peers import name_peers
from analyzer.logs.processes import build_processes
from analyzer.row_inserts import insert_values

# Bytes of log text parsed per statement: DuckDB holds a batch's lines (and their split) in memory, so
# this bounds the memory of reading whatever the total size.
BATCH_BYTES = 64 << 20
_SQL = resources.files(__package__).joinpath("records.sql").read_text("utf-8")
_CREATE_LINES, _PER_FILE, *_BATCH = [s.strip() for s in _SQL.split("\n;\n")]


@dataclass
class LogLoad:
    """What reading a log folder gave: the run id, the files seen, and the problems met (file: problem)."""

    run_id: str
    files: list[LogFile] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # unreadable files (a binary file is not a log, not lost)
    not_log_files: int = 0  # files under the folder that are not logs by name or place (never read)


def create_log_tables(con: duckdb.DuckDBPyConnection) -> None:
    """CREATE the tables of the logs model (analyzer/logs/schema.toml) in ``con`` when absent."""
    con.execute(";\n".join(t.ddl() for t in tables_for_scope("logs").values()))


def _text_problem(f: LogFile) -> str | None:
    """Why a file cannot be read as text (binary, unreadable), else None."""
    try:
        with f.path.open("rb") as fh:
            head = fh.read(4096)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return "binary (holds NUL bytes), not a text log" if b"\0" in head else None


def _batches(files: list[tuple[int, LogFile]]) -> list[list[tuple[int, LogFile]]]:
    batches: list[list[tuple[int, LogFile]]] = [[]]
    size = 0
    for item in files:
        if batches[-1] and size + item[1].size_bytes > BATCH_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(item)
        size += item[1].size_bytes
    return [b for b in batches if b]


_LINE_CUT = 1 << 20  # characters kept of a line in a repaired copy


def _repaired_copy(f: LogFile, folder: Path) -> Path:
    """A copy of a file DuckDB could not read as lines, in a private folder: bytes that are not UTF-8
    replaced, the column separator of the line reader (\\x01) replaced, lines cut to 1 Mi characters."""
    text = f.path.read_bytes().decode("utf-8", errors="replace").replace("\x01", "\ufffd")
    lines = [line if len(line) <= _LINE_CUT else line[:_LINE_CUT] + " [line cut]" for line in text.split("\n")]
    copy = folder / f"{abs(hash(f.rel))}.log"
    copy.write_text("\n".join(lines), encoding="utf-8")
    return copy


def _read_lines(con: duckdb.DuckDBPyConnection, file_id: int, f: LogFile, spare: Path) -> str | None:
    """The file's lines into _log_lines (a file DuckDB cannot split, as not UTF-8, is read from a repaired
    copy); why it could not be read at all, else None."""
    try:
        con.execute(_PER_FILE, {"path": str(f.path), "file_id": file_id})
        return None
    except duckdb.InvalidInputException:
        pass
    except (duckdb.Error, OSError) as exc:
        return f"could not be read ({_first_line(exc)})"
    try:
        con.execute(_PER_FILE, {"path": str(_repaired_copy(f, spare)), "file_id": file_id})
        return None
    except (duckdb.Error, OSError, MemoryError) as exc:
        return f"could not be read as lines of text ({_first_line(exc)})"


def _first_line(exc: BaseException) -> str:
    """The first line of an error's message, cut to 200 characters (DuckDB's CSV errors quote the line)."""
    text = first_line(exc, None)
    return text if len(text) <= 200 else text[:200] + "..."


def _read_batch(
    con: duckdb.DuckDBPyConnection, run_id: str, batch: list[tuple[int, LogFile]], spare: Path, activity: bool
) -> list[str]:
    """Read a batch's lines (file by file), then split them into records (all its files at once); returns
    the problems of the files that could not be read."""
    rows = [
        (i, f.rel, f.layout, f.log_kind, f.collection, f.rank_id, f.node_id, f.device_id, f.name_pid, f.size_bytes)
        for i, f in batch
    ]
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _log_batch (file_id INTEGER, rel VARCHAR, layout VARCHAR, log_kind VARCHAR, "
        "collection VARCHAR, rank_id INTEGER, node_id INTEGER, device_id INTEGER, name_pid BIGINT, size_bytes BIGINT, "
        "skipped VARCHAR)"
    )
    insert_values(con, "_log_batch", [(*row, None) for row in rows])
    con.execute(_CREATE_LINES)
    problems = []
    for file_id, f in batch:
        if why := _read_lines(con, file_id, f, spare):
            problems.append(f"{f.rel}: {why}; skipped")
            con.execute("UPDATE _log_batch SET skipped = ? WHERE file_id = ?", [why, file_id])
    case, knowledge = match_expression()
    values = {"run_id": run_id, "with_activity": activity, **activity_patterns(), **knowledge}
    for sql in _BATCH:
        if sql.startswith("UPDATE") and not con.execute("SELECT count(*) FROM _log_tails").fetchall()[0][0]:
            continue  # no continuation line in the batch: the update would only scan the table
        sql = sql.replace("{error_match}", case)
        con.execute(sql, {k: v for k, v in values.items() if f"${k}" in sql})
    return problems


def _skipped_row(con, run_id: str, file_id: int, f: LogFile, why: str) -> None:
    con.execute(
        "INSERT INTO log_files BY NAME SELECT ? AS run_id, ? AS file_id, ? AS path, ? AS layout, ? AS log_kind, "
        "? AS collection, ? AS rank_id, ? AS node_id, ? AS device_id, ? AS name_pid, ? AS size_bytes, 0 AS line_count, "
        "0 AS record_count, 0 AS unparsed_line_count, ? AS skipped",
        [
            run_id,
            file_id,
            f.rel,
            f.layout,
            f.log_kind,
            f.collection,
            f.rank_id,
            f.node_id,
            f.device_id,
            f.name_pid,
            f.size_bytes,
            why,
        ],
    )


def load_logs(
    con: duckdb.DuckDBPyConnection, root: Path, run_id: str, activity: bool = False, loose: bool = False
) -> LogLoad:
    """Read every log file under ``root`` into the logs tables of ``con`` as run ``run_id``.

    ``activity``: also classify what each record shows the host doing (log_events.host_activity, for the
    profile's gap causes: diagnose --logs); left NULL otherwise, a pattern test of every record spared.

    A file that is binary or unreadable is listed in log_files with the reason and in the problems;
    lines that are not records are counted (log_files.unparsed_line_count). Never raises for a file.
    ``loose``: only the files directly in ``root`` (collections.py).
    """
    create_log_tables(con)
    create_knowledge(con, run_id)
    files, others = scan_log_folder(root, loose)
    load = LogLoad(run_id, files, not_log_files=others)
    readable = []
    for file_id, f in enumerate(load.files, start=1):
        if why := _text_problem(f):
            load.problems.append(f"{f.rel}: {why}; skipped")
            if why.startswith("cannot"):
                load.lost.append(f.rel)
            _skipped_row(con, run_id, file_id, f, why)
        else:
            readable.append((file_id, f))
    spare = Path(tempfile.mkdtemp(prefix="npu-triage-logs-"))
    try:
        for batch in _batches(readable):
            load.problems += _read_batch(con, run_id, batch, spare, activity)
    finally:
        shutil.rmtree(spare, ignore_errors=True)
    build_processes(con, run_id)
    name_peers(con, run_id)
    return load
