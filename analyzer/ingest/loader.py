"""Read every export found under a path into one DuckDB connection holding the normalized tables."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from analyzer.ingest import numbered_rows
from analyzer.ingest.database import connect
from analyzer.ingest.discover import absent_reason, printable, scan
from analyzer.ingest.finalize import finalize_run
from analyzer.ingest.memory_budget import current_limit_bytes, duckdb_memory_limit, file_sizes
from analyzer.ingest.model import ExportSource, IngestError, Problem, ReadContext
from analyzer.ingest.readers import READERS
from analyzer.ingest.run_metadata import read_run_metadata
from analyzer.ingest.timeline_split import splits_in_parallel
from analyzer.ingest.timeline_tail import TailHandoff, plan_tail
from analyzer.stop_signal import stop_requested


@dataclass
class Ingested:
    """The result of reading a path: a connection with every run's tables, and what went wrong."""

    con: duckdb.DuckDBPyConnection
    run_ids: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    sources: list[ExportSource] = field(default_factory=list)


# Readers whose work is one single-threaded DuckDB scan (the timeline JSON parse): they run on a second
# connection beside the others, so that a 2-core machine parses the JSON while it reads the CSVs.
_BESIDE = ("timeline",)
# Readers the main thread runs first: msprof's task_time rows, in before the timeline JSON's device
# tasks, supersede those (timeline_store.without_superseded), which are then never inserted.
_FIRST = ("task_time",)


def _read_source(con: duckdb.DuckDBPyConnection, source: ExportSource, left_out_kinds: frozenset[str]) -> ReadContext:
    ctx = ReadContext(run_id=source.source_id, source=source, left_out_kinds=left_out_kinds)
    numbered_rows.register(con, ctx.run_id)  # before any reader writes timeline or ops rows
    meta = read_run_metadata(ctx)
    kinds = [kind for kind in READERS if source.files.get(kind)]
    beside = [kind for kind in kinds if kind in _BESIDE] if len(kinds) > 1 else []
    # While a reader runs beside them, the others read their CSVs serially (both cores are busy).
    parts = {kind: ctx.part(scan_serially=bool(beside) and kind not in beside) for kind in kinds}
    _run_readers(con, source, kinds, beside, parts)
    for kind in kinds:  # problems in reader order, however the readers interleaved
        ctx.absorb(parts[kind])
    finalize_run(con, ctx, meta)
    return ctx


def _run_readers(
    con: duckdb.DuckDBPyConnection,
    source: ExportSource,
    kinds: list[str],
    beside: list[str],
    parts: dict[str, ReadContext],
) -> None:
    """Run the readers of ``kinds``: those of ``beside`` on a side connection, the others on ``con``
    meanwhile, then the tail of a timeline file cut in two (``timeline_tail``)."""
    # One file is one single-threaded parse (unless cut in two or in pieces); slices parse in parallel.
    single_file = bool(beside) and all(len(source.files[kind]) == 1 for kind in beside)
    single_files = [source.files[kind][0] for kind in beside] if single_file else []
    handoff = _plan_handoff(source, kinds, beside, single_files)
    in_pieces = handoff is None and _parsed_in_pieces(con, single_files)
    if handoff is not None:
        parts["timeline"].tail_handoff = handoff
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            with _one_thread_per_query(con, bool(single_files) and not in_pieces):
                running = [pool.submit(_read_beside, con, kind, source.files[kind], parts[kind]) for kind in beside]
                try:
                    for kind in sorted(kinds, key=lambda k: k not in _FIRST):  # else in order
                        if kind not in beside:
                            _guarded(READERS[kind], con, source.files[kind], parts[kind])
                    if handoff is not None:
                        handoff.parse_tail(con)
                finally:
                    if handoff is not None:
                        handoff.abandon()  # whatever happened, the side thread is not left waiting
            for future in running:
                future.result()  # a reader's unexpected exception surfaces here, as if run in line
    finally:
        if handoff is not None:
            handoff.discard()


def _parsed_in_pieces(con: duckdb.DuckDBPyConnection, single_files: list[Path]) -> bool:
    """True when a lone file read beside is parsed in pieces on every thread (big enough, and
    memory enough: ``timeline_split.splits_in_parallel``)."""
    if not single_files:
        return False
    threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    limit = current_limit_bytes(con)
    return any(splits_in_parallel(path, threads, limit) for path in single_files)


def _plan_handoff(
    source: ExportSource, kinds: list[str], beside: list[str], single_files: list[Path]
) -> TailHandoff | None:
    """A lone timeline file read beside the CSVs, cut in two so that the main thread parses its
    tail once the CSVs are in (``timeline_tail``); None when there is no such file or no cut.

    Preferred to a parse in pieces on every thread (``timeline_split``), which runs beside the CSVs
    too when memory allows: as fast (torch_npu 1x, default budget: 1.87 s against 1.92, median of
    10 interleaved) and 20 to 90 MB lighter at peak, as no piece waits for the one before it."""
    if beside != ["timeline"] or not single_files:
        return None
    others = [path for kind in kinds if kind not in beside for path in source.files[kind]]
    return plan_tail(tuple(single_files), sum(file_sizes(others)))


@contextmanager
def _one_thread_per_query(con: duckdb.DuckDBPyConnection, serial: bool) -> Iterator[None]:
    """While the main thread's readers run beside a single-file JSON parse (``serial``), each DuckDB
    query keeps to its own thread, so the parse (the longest piece) is not slowed by a parallel CSV
    scan on the same cores.

    Not when that file is parsed in pieces on every thread: one thread would then serialize them."""
    if not serial:
        yield
        return
    before = con.execute("SELECT current_setting('threads')").fetchall()[0][0]
    con.execute("SET threads = 1")
    try:
        yield
    finally:
        con.execute(f"SET threads = {int(before)}")


def _read_beside(con: duckdb.DuckDBPyConnection, kind: str, paths: tuple[Path, ...], ctx: ReadContext) -> None:
    """Run one reader on its own connection to the same database (its temp tables are its own)."""
    cursor = con.cursor()
    try:
        _guarded(READERS[kind], cursor, paths, ctx)
    finally:
        cursor.close()


def _input_files(sources: list[ExportSource]) -> list[Path]:
    return [path for source in sources for paths in source.files.values() for path in paths]


def _guarded(reader: Callable, con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> None:
    """Run one reader; any failure becomes a problem on its file, never a traceback."""
    try:
        reader(con, paths, ctx)
    except duckdb.OutOfMemoryException:
        raise  # not the file's fault: the command is run again with more memory (cli/__init__.py)
    except (
        duckdb.Error,
        OSError,
        ValueError,
        KeyError,
        TypeError,
        IndexError,
        RecursionError,
        UnicodeError,
        MemoryError,
        OverflowError,
    ) as exc:
        first = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        ctx.report(paths[0], "", "error", f"could not be read: {first}", "the file is skipped; the rest is used")


def usable_run_ids(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> list[str]:
    """The runs holding at least one device task with a start time and a duration (what analyses need)."""
    rows = con.execute(
        "SELECT DISTINCT run_id FROM ops WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
        "AND start_ns IS NOT NULL AND dur_us IS NOT NULL ORDER BY run_id",
        [run_ids],
    ).fetchall()
    return [r[0] for r in rows]


def load_export(
    path: Path | str,
    con: duckdb.DuckDBPyConnection | None = None,
    progress: Callable[[ExportSource], None] | None = None,
    left_out_kinds: frozenset[str] = frozenset(),
) -> Ingested:
    """Discover and read every export under ``path``.

    Timeline events of ``left_out_kinds`` are not stored: for a caller that never reads them (a
    diagnosis whose rules read no flow or overlap segment, ``rule_engine.timeline_use``), where they
    would be two thirds of a msprof timeline's rows.

    Raises IngestError when the path does not exist or holds no export at all. An export whose
    files are all unusable still yields a run with its problems recorded; callers decide whether
    that is fatal.
    """
    path = Path(path)
    if not path.exists():
        raise IngestError(f"{printable(path)}: {absent_reason(path)}")
    sources, unreadable = scan(path)
    if not sources and unreadable:
        raise IngestError(f"{unreadable[0].path}: {unreadable[0].reason}")
    if not sources:
        raise IngestError(
            f"{path}: no Ascend profiling export found (looked for ASCEND_PROFILER_OUTPUT/, "
            "PROF_*/mindstudio_profiler_output/, msprof_*.db, ascend_pytorch_profiler_*.db, "
            "kernel_details.csv, op_summary_*.csv, trace_view.json)"
        )
    con = con or connect(duckdb_memory_limit(_input_files(sources)))
    result = Ingested(con=con, sources=sources)
    result.problems += [Problem(u.path, "", "error", u.reason, "the rest of the tree is read") for u in unreadable]
    for source in sources:
        if progress:
            progress(source)
        try:
            ctx = _read_source(con, source, left_out_kinds)
        except (duckdb.OutOfMemoryException, duckdb.InterruptException):
            raise
        except Exception as exc:  # one export that cannot be read never ends the reading of the others
            if stop_requested():
                raise
            first = (str(exc).splitlines() or [""])[0][:300]
            result.problems.append(
                Problem(
                    printable(source.root),
                    "",
                    "error",
                    f"could not be read: {type(exc).__name__}: {first}",
                    "this export is skipped; the others are read",
                )
            )
            continue
        result.problems.extend(ctx.problems)
        result.run_ids.extend(
            r[0]
            for r in con.execute(
                "SELECT run_id FROM runs WHERE run_id = ? OR run_id LIKE ? ORDER BY run_id",
                [source.source_id, source.source_id + "/dev%"],
            ).fetchall()
        )
    return result
