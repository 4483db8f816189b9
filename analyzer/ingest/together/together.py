"""Read many exports at once: every kind's files of all runs in one scan per header, checks and runs rows
as set-wise queries. A run with anything to report, or of a shape read otherwise, is left to the careful
path (loader._read_source), which reads it alone and reports exactly what it reports today."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from analyzer.ingest.communication.communication_json import (
    COMM_OPS_TYPES,
    communication_rows,
    load_communication_matrix,
)
from analyzer.ingest.csv.csv_group import RunFile, read_groups
from analyzer.ingest.metadata.run_metadata import read_run_metadata
from analyzer.ingest.model import ExportSource, ReadContext
from analyzer.ingest.readers import READERS
from analyzer.ingest.schema import TABLES
from analyzer.ingest.together.grouped_kinds import JSON_KINDS, group_read, read_together
from analyzer.ingest.together.run_checks import runs_to_recheck
from analyzer.ingest.together.set_finalize import ReadRun, devices_of, finalize_together
from analyzer.stop_signal import stop_requested

# Fewer exports than this are read one by one: a single export gains nothing from a scan of many.
_AT_LEAST = 2


def read_exports_together(
    con: duckdb.DuckDBPyConnection, sources: list[ExportSource], left_out_kinds: frozenset[str]
) -> dict[str, ReadContext]:
    """The exports of ``sources`` read together, by run id, each having nothing to report; the others
    are the caller's to read one by one (nothing of theirs is left in the tables)."""
    chosen = [s for s in sources if _fits(s)]
    if len(chosen) < _AT_LEAST:
        return {}
    try:
        return _read(con, chosen, left_out_kinds)
    except (duckdb.OutOfMemoryException, duckdb.InterruptException):
        raise
    except Exception:  # whatever went wrong here, the careful path reads every one of them again
        if stop_requested():
            raise
        _remove(con, [s.source_id for s in chosen])
        return {}


def _fits(source: ExportSource) -> bool:
    """An export holding only kinds read together, one file of each."""
    return all(read_together(kind) and len(paths) == 1 for kind, paths in source.files.items())


def _read(
    con: duckdb.DuckDBPyConnection, sources: list[ExportSource], left_out_kinds: frozenset[str]
) -> dict[str, ReadContext]:
    runs: dict[str, ReadRun] = {}
    careful: set[str] = set()
    for s in sources:
        ctx = ReadContext(run_id=s.source_id, source=s, left_out_kinds=left_out_kinds)
        meta = read_run_metadata(ctx)
        if ctx.problems:
            careful.add(s.source_id)
        else:
            runs[s.source_id] = ReadRun(ctx, meta)
    parts: dict[str, list[ReadContext]] = {run_id: [] for run_id in runs}
    for kind in READERS:
        files = [
            RunFile(i, r.ctx.source.files[kind][0], r.ctx.part()) for i, r in runs.items() if r.ctx.source.has(kind)
        ]
        if files:
            careful |= _read_kind(con, kind, files)
            for f in files:
                parts[f.run_id].append(f.ctx)
    for run_id, run_parts in parts.items():
        for part in run_parts:  # in READERS order, as loader._read_source takes them over
            runs[run_id].ctx.absorb(part)
    devices = devices_of(con, list(runs))
    careful |= {run_id for run_id, found in devices.items() if len(found) > 1}
    _remove(con, sorted(careful))
    done = [r for run_id, r in runs.items() if run_id not in careful]
    if done:
        finalize_together(con, done, devices)
    return {r.ctx.run_id: r.ctx for r in done}


def _read_kind(con: duckdb.DuckDBPyConnection, kind: str, files: list[RunFile]) -> set[str]:
    """Read one kind's files of every run; the runs needing the careful path."""
    if kind in JSON_KINDS:
        return _read_json(con, kind, files)
    read = group_read(kind)
    assert read is not None  # _fits let only kinds read together through
    careful = read_groups(con, read, files)
    for f in files:
        if f.run_id not in careful:
            f.ctx.mark_read(f.path)
    return careful | runs_to_recheck(con, read, [f.run_id for f in files])


def _read_json(con: duckdb.DuckDBPyConnection, kind: str, files: list[RunFile]) -> set[str]:
    """communication.json rows of every run in one insert (the matrix files are only checked)."""
    careful = set()
    rows: list[dict[str, object]] = []
    for f in files:
        found = _json_rows(con, kind, f)
        if found is None:
            careful.add(f.run_id)
        else:
            rows += found
    if rows:
        schema = pa.schema([("run_id", pa.string()), *COMM_OPS_TYPES.items()])
        con.register("_comm_ops_together", pa.Table.from_pylist(rows, schema=schema))
        try:
            con.execute("INSERT INTO comm_ops BY NAME SELECT * FROM _comm_ops_together")
        finally:
            con.unregister("_comm_ops_together")
    return careful


def _json_rows(con: duckdb.DuckDBPyConnection, kind: str, f: RunFile) -> list[dict[str, object]] | None:
    """The comm_ops rows of one run's file, tagged with its run; None when the reader has anything to say."""
    try:
        if kind == "communication":
            found = [{"run_id": f.run_id, **row} for row in communication_rows((f.path,), f.ctx)]
        else:
            found = []
            load_communication_matrix(con, (f.path,), f.ctx)
    except Exception:  # the careful path names it (loader._guarded)
        return None
    return None if f.ctx.problems else found


def _remove(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> None:
    """Every row of these runs, from every normalized table."""
    if not run_ids:
        return
    for name in TABLES:
        con.execute(f"DELETE FROM {name} WHERE run_id IN (SELECT unnest($runs::VARCHAR[]))", {"runs": run_ids})
