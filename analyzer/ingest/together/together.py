"""Read many exports at once: every kind's files of all runs in one scan per header, checks and runs rows
as set-wise queries. A run with anything to report, or of a shape read otherwise, is left to the careful
path (loader._read_source), which reads it alone and reports exactly what it reports today."""

from __future__ import annotations

import contextlib
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from analyzer.ingest.communication.communication_json import (
    check_communication_matrix,
    comm_ops_table,
    communication_rows,
)
from analyzer.ingest.csv.csv_group import (
    Prewritten,
    RunFile,
    discard_prewritten,
    prewrite_groups,
    probe_files,
    read_groups,
)
from analyzer.ingest.database import in_transaction, insert_tables
from analyzer.ingest.finalize import device_run_id, devices_of
from analyzer.ingest.metadata.run_metadata import read_run_metadata
from analyzer.ingest.model import ExportSource, ReadContext
from analyzer.ingest.readers import DEVICE_TASK_KINDS, READERS
from analyzer.ingest.schema import TABLES
from analyzer.ingest.sql_values import IN_RUNS
from analyzer.ingest.together.grouped_kinds import JSON_KINDS, TIMELINE, group_read, read_together
from analyzer.ingest.together.run_checks import runs_to_recheck
from analyzer.ingest.together.set_finalize import ReadRun, finalize_together, untimed
from analyzer.ingest.together.timeline_group import probe_timelines, read_timelines
from analyzer.stop_signal import stop_requested

# Fewer exports than this are read one by one: a single export gains nothing from a scan of many.
_AT_LEAST = 2
# Kinds read one export at a time beside kinds read together: their readers fill tables no kind read
# together fills, and read no rows of those.
_ALONE_BESIDE = frozenset({"timeline", "task_time", "ai_core_utilization", "ai_vector_core_utilization"})
# communication.json files whose rows are converted to Arrow columns at once (together._json_found).
_RUNS_PER_TABLE = 256


@dataclass
class Together:
    """What was read together: whole exports (by run id, each with nothing to report) and, of exports
    holding other kinds too, the kinds already read (kind -> its reader's part context, for
    loader._read_source to read the rest); ``split``: the whole exports split into one run per device, with
    their runs' ids."""

    done: dict[str, ReadContext] = field(default_factory=dict)
    pre_read: dict[str, dict[str, ReadContext]] = field(default_factory=dict)
    split: dict[str, list[str]] = field(default_factory=dict)

    def runs_of(self, source_id: str) -> list[str]:
        """The runs of a whole export read together, by id (as ``loader._runs_of`` lists them)."""
        return self.split.get(source_id, [source_id])


def read_exports_together(
    con: duckdb.DuckDBPyConnection, sources: list[ExportSource], left_out_kinds: frozenset[str]
) -> Together:
    """The exports of ``sources`` read together; the others are the caller's to read one by one (nothing
    of theirs is left in the tables)."""
    whole = [s for s in sources if _fits(s)]
    partial = [s for s in sources if not _fits(s) and _partly_fits(s)]
    # Inside the caller's own transaction the per-file reader reads every cell as text (csv_source.stream_csv).
    if len(whole) + len(partial) < _AT_LEAST or in_transaction(con):
        return Together()
    try:
        return _read(con, whole, partial, left_out_kinds)
    except (duckdb.OutOfMemoryException, duckdb.InterruptException):
        raise
    except Exception:  # whatever went wrong here, the careful path reads every one of them again
        if stop_requested():
            raise
        _remove(con, [s.source_id for s in whole + partial])
        return Together()


def _single(source: ExportSource, kind: str) -> bool:
    """A kind read together, of which the export holds one file; the timeline only when the export's other
    device tasks (task_time) are read together too, so that these go in first, as the loader reads them."""
    if kind == TIMELINE and any(k != kind and not _one(source, k) for k in DEVICE_TASK_KINDS if k in source.files):
        return False
    return _one(source, kind)


def _one(source: ExportSource, kind: str) -> bool:
    return read_together(kind) and len(source.files.get(kind, ())) == 1


def _fits(source: ExportSource) -> bool:
    """An export holding only kinds read together, one file of each."""
    return all(_single(source, kind) for kind in source.files)


def _partly_fits(source: ExportSource) -> bool:
    """An export holding some kinds read together, the rest only of kinds whose readers fill tables of their
    own (so that the rows read first leave each reader's checks as they are)."""
    alone = {kind for kind in source.files if not _single(source, kind)}
    return alone != set(source.files) and alone <= _ALONE_BESIDE


def _read(
    con: duckdb.DuckDBPyConnection,
    whole: list[ExportSource],
    partial: list[ExportSource],
    left_out_kinds: frozenset[str],
) -> Together:
    contexts = {s.source_id: ReadContext(s.source_id, s, left_out_kinds=left_out_kinds) for s in [*whole, *partial]}
    careful: set[str] = set()
    # One thread: its work holds the interpreter, so a second would only slow the first kind, which the
    # connection waits for, by taking turns with the kinds after it.
    with ThreadPoolExecutor(max_workers=1) as pool:
        kinds = _kinds(contexts)
        prepared = [pool.submit(_prepare, kind, files) for kind, files in kinds]
        # The whole exports' metadata is read after their kinds' files; a run it has anything to say on is
        # removed afterwards with the runs the kinds send to the careful path.
        metadata = pool.submit(lambda: [read_run_metadata(contexts[s.source_id]) for s in whole])
        try:
            parts = _read_kinds(con, contexts, careful, kinds, prepared)
        finally:
            _discard(prepared)
        runs = {s.source_id: ReadRun(contexts[s.source_id], m) for s, m in zip(whole, metadata.result(), strict=True)}
    careful |= {run_id for run_id, run in runs.items() if run.ctx.problems}
    runs = {run_id: run for run_id, run in runs.items() if run_id not in careful}
    for run_id, run in runs.items():
        for part in parts[run_id].values():  # in READERS order, as loader._read_source takes them over
            run.ctx.absorb(part)
    devices = devices_of(con, list(runs))
    careful |= untimed(con, [run_id for run_id, run in runs.items() if TIMELINE in run.ctx.source.files])
    _remove(con, sorted(careful))
    done = [r for run_id, r in runs.items() if run_id not in careful]
    if done:
        finalize_together(con, done, devices)
    pre_read = {s.source_id: parts[s.source_id] for s in partial if s.source_id not in careful}
    several = {r.ctx.run_id: devices[r.ctx.run_id] for r in done if len(devices.get(r.ctx.run_id) or ()) > 1}
    split = {run_id: sorted(device_run_id(run_id, d) for d in found) for run_id, found in several.items()}
    return Together({r.ctx.run_id: r.ctx for r in done}, pre_read, split)


def _kinds(contexts: dict[str, ReadContext]) -> list[tuple[str, list[RunFile]]]:
    """Every kind read together, in READERS order, with the files of the runs holding it."""
    kinds = []
    for kind in READERS:
        held = [(i, ctx) for i, ctx in contexts.items() if _single(ctx.source, kind)]
        if held:
            kinds.append((kind, [RunFile(i, ctx.source.files[kind][0], ctx.part()) for i, ctx in held]))
    return kinds


def _read_kinds(
    con: duckdb.DuckDBPyConnection,
    contexts: dict[str, ReadContext],
    careful: set[str],
    kinds: list[tuple[str, list[RunFile]]],
    prepared: list[Future],
) -> dict[str, dict[str, ReadContext]]:
    """Every kind of ``kinds`` read, kind by kind; per run, kind -> the part context its problems went to. The
    runs needing the careful path are added to ``careful``. The Python work on every kind's files (probing
    heads and tails, writing joined files, parsing JSON: ``prepared``, by a thread) goes on ahead of the
    connection's scans, which release the interpreter: both go on at once, and the kinds are still inserted
    in READERS order."""
    parts: dict[str, dict[str, ReadContext]] = {run_id: {} for run_id in contexts}
    for (kind, files), ready in zip(kinds, prepared, strict=True):
        careful |= _read_kind(con, kind, files, ready.result())
        for f in files:
            parts[f.run_id][kind] = f.ctx
    return parts


def _prepare(kind: str, files: list[RunFile]) -> JsonFound | list | tuple[list, Prewritten]:
    """The Python work on one kind's files, touching no connection: their rows (JSON kinds) or each file's probe
    (with the joined files of its scans written, for CSV kinds)."""
    if kind in JSON_KINDS:
        return _json_found(kind, files)
    if kind == TIMELINE:
        return probe_timelines(files)
    probed = probe_files(files)
    return probed, prewrite_groups(files, probed)


def _discard(prepared: list[Future]) -> None:
    """The joined files left by kinds not read (a read that stopped), removed once written."""
    for ready in prepared:
        if ready.cancel():  # not started: nothing written, nothing to wait for
            continue
        with contextlib.suppress(Exception):
            found = ready.result()
            if isinstance(found, tuple):
                discard_prewritten(found[1])


def _read_kind(con: duckdb.DuckDBPyConnection, kind: str, files: list[RunFile], prepared: Any) -> set[str]:
    """Read one kind's files of every run (``prepared``: ``_prepare``'s); the runs needing the careful path."""
    if kind in JSON_KINDS:
        return _insert_json(con, prepared)
    if kind == TIMELINE:
        return read_timelines(con, files, prepared)
    read = group_read(kind)
    assert read is not None  # _fits let only kinds read together through
    probed, prewritten = prepared
    careful = read_groups(con, read, files, probed, prewritten)
    for f in files:
        if f.run_id not in careful:
            f.ctx.mark_read(f.path)
    return careful | runs_to_recheck(con, read, [f.run_id for f in files])


@dataclass(frozen=True)
class JsonFound:
    """What ``_json_found`` read of a JSON kind's files: the runs the careful path reads, and the comm_ops rows
    of the others (tagged with their runs, in the files' order)."""

    careful: set[str]
    tables: list[pa.Table]


def _insert_json(con: duckdb.DuckDBPyConnection, found: JsonFound) -> set[str]:
    """communication.json rows of every run in one insert (the matrix files are only checked)."""
    tables = [rows for rows in found.tables if rows.num_rows]
    if tables:
        insert_tables(con, {"comm_ops": pa.concat_tables(tables)})
    return found.careful


def _json_found(kind: str, files: list[RunFile]) -> JsonFound:
    """The comm_ops rows of the files that read without a word to say, tagged with their runs: converted to
    columns _RUNS_PER_TABLE files at a time (an Arrow conversion per file costs more than its few rows, and
    rows held as Python objects for every run at once would cost memory)."""
    careful: set[str] = set()
    tables: list[pa.Table] = []
    for start in range(0, len(files), _RUNS_PER_TABLE):
        rows: list[dict[str, object]] = []
        runs: list[str] = []
        for f in files[start : start + _RUNS_PER_TABLE]:
            found = _json_rows(kind, f)
            if found is None:
                careful.add(f.run_id)
            else:
                rows += found
                runs += [f.run_id] * len(found)
        table = comm_ops_table(rows)
        tables.append(table.add_column(0, pa.field("run_id", pa.string()), pa.array(runs, pa.string())))
    return JsonFound(careful, tables)


def _json_rows(kind: str, f: RunFile) -> list[dict[str, object]] | None:
    """The comm_ops rows of one run's file; None when the reader has anything to say."""
    try:
        rows = []
        if kind == "communication":
            rows = communication_rows((f.path,), f.ctx)
        else:
            check_communication_matrix((f.path,), f.ctx)
    except Exception:  # the careful path names it (loader._guarded)
        return None
    return None if f.ctx.problems else rows


def _remove(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> None:
    """Every row of these runs, from every normalized table."""
    if not run_ids:
        return
    for name in TABLES:
        con.execute(f"DELETE FROM {name} WHERE {IN_RUNS}", {"runs": run_ids})
