"""Many runs' CSV files of one kind read in one DuckDB scan per header: files with the same header line
and encoding are one group, scanned once with the file name as a column, each row tagged with its run.

Only files that read without a word to say go this way: a file the per-file reader would report anything
on (an unusable head, a header problem, a row that does not fit, no rows, a cut last row) comes back as a
run for the careful path (``csv_source.stream_csv``), which reads it again and says what it says today.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from analyzer.ingest.csv.csv_joined import Joined, insert_joined, remove_joined, write_joined
from analyzer.ingest.csv.csv_shape import ends_mid_row
from analyzer.ingest.csv.csv_source import CsvFile, checked_scan, probe, scans_in_parallel
from analyzer.ingest.model import ReadContext
from analyzer.ingest.sql_values import IN_RUNS

_counter = itertools.count()
# Files per scan: enough that the per-statement and per-scan costs vanish (a scan reads its files on every thread);
# DuckDB's memory limit bounds what a scan holds.
_FILES_PER_SCAN = 1024
# Columns a group scan adds to the rows: a header naming one of them is read file by file.
_ADDED = frozenset({"filename", "file_index", "run_id"})
# The parameter listing the runs of a scan's files, in the files' order.
_RUNS = "group_runs"


@dataclass(frozen=True)
class GroupRead:
    """How one kind's files fill their table: the statement over ``{scan}`` (``rows_run=True``: rows carry
    their run id), the header columns parsed as numbers, and what the per-file reader's checks on the
    inserted rows look at (``run_checks.runs_to_recheck``); ``params``: the statement's constants."""

    table: str
    statement: Callable[..., str | None]
    types: Callable[[list[str]], dict[str, str]]
    key: tuple[str, ...] = ()
    times: tuple[str, ...] = ()
    unusable: str = ""
    params: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class RunFile:
    """One run's file of the kind being read, and the context its problems would go to."""

    run_id: str
    path: Path
    ctx: ReadContext


@dataclass(frozen=True)
class GroupStatement:
    """The statement of one group: how its kind is read, its SQL over ``{scan}``, the header's column types."""

    read: GroupRead
    sql: str
    typed: dict[str, str]


def probe_files(files: list[RunFile]) -> list[CsvFile | None]:
    """Each file as ``read_groups`` needs it probed (None: the careful path's); Python work only, no connection,
    so that it may run beside the connection's work on other files."""
    return [_clean_probe(f) for f in files]


# The joined files written ahead of a kind's insert (``prewrite_groups``), by the paths of their scan's files.
Prewritten = dict[tuple[Path, ...], Joined]
_Group = list[tuple[RunFile, CsvFile]]


def read_groups(
    con: duckdb.DuckDBPyConnection,
    read: GroupRead,
    files: list[RunFile],
    probed: list[CsvFile | None],
    prewritten: Prewritten | None = None,
) -> set[str]:
    """Insert the rows of every file that reads cleanly (``probed``: ``probe_files(files)``; ``prewritten``:
    ``prewrite_groups(files, probed)``, each removed once read or not needed); return the runs whose file
    needs the careful path (their rows, if any went in, are the caller's to remove)."""
    prewritten = dict(prewritten or {})
    try:
        careful, groups = _groups(files, probed)
        for group in groups:
            careful |= _read_group(con, read, group, prewritten)
        return careful
    finally:
        discard_prewritten(prewritten)


def prewrite_groups(files: list[RunFile], probed: list[CsvFile | None]) -> Prewritten:
    """The joined files (csv_joined) of the scans ``read_groups`` makes of these files, written ahead: Python
    work only, no connection, so that it may run beside the connection's work on other files."""
    written: Prewritten = {}
    try:
        for group in _groups(files, probed)[1]:
            for part in _scans(group):
                paths = tuple(f.path for f, _ in part)
                if len(part) > 1 and (joined := write_joined(list(paths), part[0][1].encoding)) is not None:
                    written[paths] = joined
    except BaseException:
        discard_prewritten(written)
        raise
    return written


def discard_prewritten(prewritten: Prewritten) -> None:
    """The joined files of ``prewritten`` removed (those read are gone already)."""
    for joined in prewritten.values():
        remove_joined(joined.path)


def _groups(files: list[RunFile], probed: list[CsvFile | None]) -> tuple[set[str], list[_Group]]:
    """The runs whose file needs the careful path, and the other files by header and encoding."""
    careful: set[str] = set()
    groups: dict[tuple[str, str], _Group] = {}
    for f, found in zip(files, probed, strict=True):
        if found is None:
            careful.add(f.run_id)
        else:
            groups.setdefault((found.header, found.encoding), []).append((f, found))
    return careful, list(groups.values())


def _scans(group: _Group) -> list[_Group]:
    """The group's files one scan each: _FILES_PER_SCAN at a time."""
    return [group[start : start + _FILES_PER_SCAN] for start in range(0, len(group), _FILES_PER_SCAN)]


def _clean_probe(f: RunFile) -> CsvFile | None:
    """The file as the per-file reader sees it, when it has nothing to report and reads the usual way (its
    last row complete)."""
    scratch = f.ctx.part()
    try:
        if scans_in_parallel(f.path):
            return None  # a big file is read by itself anyway
        probed = probe(f.path, scratch, first_row=False)  # the first row only of each group's first file
        if probed is None or scratch.problems or not probed.strict or _ADDED & set(probed.columns):
            return None
        return None if ends_mid_row(f.path, probed.encoding, len(probed.columns)) else probed
    except OSError:
        return None


def _read_group(con: duckdb.DuckDBPyConnection, read: GroupRead, group: _Group, prewritten: Prewritten) -> set[str]:
    """One scan per _FILES_PER_SCAN of the group's files (split in halves while a scan fails); the runs to
    read carefully."""
    first_file = group[0][0]
    scratch = first_file.ctx.part()
    first = probe(first_file.path, scratch)  # read as _clean_probe read it, now with its first row
    if first is None:
        return {f.run_id for f, _ in group}
    columns = list(first.columns)
    sql = read.statement(first.path, columns, first.first_row, scratch, True)
    if sql is None or scratch.problems:
        return {f.run_id for f, _ in group}
    types = read.types(columns)
    statement = GroupStatement(read, sql, {name: types.get(name, kind) for name, kind in first.columns.items()})
    careful: set[str] = set()
    for part in _scans(group):
        careful |= _scan(con, statement, part, prewritten.pop(tuple(f.path for f, _ in part), None))
    return careful


def _scan(
    con: duckdb.DuckDBPyConnection, statement: GroupStatement, group: _Group, written: Joined | None = None
) -> set[str]:
    """Insert the group's rows: joined into one file (csv_joined; ``written``: that file, when written ahead)
    where their lines are their rows, the other files (all of them when the joined insert is undone) as a
    list (``_scan_listed``)."""
    if len(group) > 1 and (joined := _insert_joined(con, statement, group, written)) is not None:
        careful, left = joined
        return careful | _scan_listed(con, statement, [group[n] for n in left])
    return _scan_listed(con, statement, group)


def _scan_listed(
    con: duckdb.DuckDBPyConnection, statement: GroupStatement, group: list[tuple[RunFile, CsvFile]]
) -> set[str]:
    """Insert the group's rows in one scan of the list of files; a file DuckDB cannot read this way fails the
    statement (nothing inserted), so the halves are tried until the file is alone and goes the careful path."""
    if not group:
        return set()
    try:
        return _insert(con, statement, group)
    except duckdb.Error:
        if len(group) == 1:
            return {group[0][0].run_id}
        half = len(group) // 2
        return _scan_listed(con, statement, group[:half]) | _scan_listed(con, statement, group[half:])


def _insert(
    con: duckdb.DuckDBPyConnection, statement: GroupStatement, group: list[tuple[RunFile, CsvFile]]
) -> set[str]:
    """The insert itself; the runs whose file had rows that did not fit or no rows at all."""
    read, typed = statement.read, statement.typed
    n = next(_counter)
    rejects = f"_grej_{n}"
    paths = [str(f.path) for f, _ in group]
    runs = [f.run_id for f, _ in group]
    try:
        before = _rows_per_run(con, read.table, runs)
        scan = checked_scan(typed, rejects, strict=True, parallel=False, select=_tagged("*", "file_index"))
        con.execute(
            statement.sql.replace("{scan}", scan),
            {"path": paths, "columns": typed, "encoding": group[0][1].encoding, _RUNS: runs, **read.params},
        )
        after = _rows_per_run(con, read.table, runs)
        rejected = _rejected_files(con, rejects)
    finally:
        con.execute(f"DROP TABLE IF EXISTS {rejects}; DROP TABLE IF EXISTS {rejects}_scan")
    return {f.run_id for f, _ in group if str(f.path) in rejected or after.get(f.run_id, 0) == before.get(f.run_id, 0)}


def _insert_joined(
    con: duckdb.DuckDBPyConnection, statement: GroupStatement, group: _Group, written: Joined | None
) -> tuple[set[str], list[int]] | None:
    """The group's files read as one (csv_joined): the careful path's runs and the positions of the files left
    to read as a list; None having changed nothing when all of them must be read as a list."""
    read, typed = statement.read, statement.typed
    encoding = group[0][1].encoding

    def run(path: str, runs: list[str]) -> None:
        tagged = _tagged("* EXCLUDE (filename)", "filename")
        scan = checked_scan(typed, "", strict=True, parallel=True, header=False, select=tagged)
        columns = {"filename": "INTEGER", **typed}
        params = {"path": path, "columns": columns, "encoding": encoding, _RUNS: runs, **read.params}
        con.execute(statement.sql.replace("{scan}", scan), params)

    files = [(f.run_id, f.path) for f, _ in group]
    return insert_joined(con, run, files, encoding, lambda runs: _rows_per_run(con, read.table, runs), written)


def _tagged(star: str, file_no: str) -> str:
    """A scan's select list: ``star`` and the run of each row's file (``file_no``: the file's 0-based number in
    ``$group_runs``). A lookup, not a join: a hash join's output follows its build side, in an order that changes
    with the threads' timing, while a projection keeps the scan's order (helper views break ties by rowid)."""
    return f"{star}, ${_RUNS}[{file_no}::BIGINT + 1]::VARCHAR AS run_id"


def _rows_per_run(con: duckdb.DuckDBPyConnection, table: str, runs: list[str]) -> dict[str, int]:
    rows = con.execute(
        f"SELECT run_id, count(*) FROM {table} WHERE {IN_RUNS} GROUP BY run_id",
        {"runs": runs},
    ).fetchall()
    return dict(rows)


def _rejected_files(con: duckdb.DuckDBPyConnection, rejects: str) -> set[str]:
    """The files of a scan that had a row in its rejects table."""
    rows = con.execute(
        f"SELECT DISTINCT s.file_path FROM {rejects} r JOIN {rejects}_scan s USING (scan_id, file_id)"
    ).fetchall()
    return {r[0] for r in rows}
