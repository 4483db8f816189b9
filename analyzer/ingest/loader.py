"""Read every export found under a path into one DuckDB connection holding the normalized tables."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from analyzer.errors import first_line
from analyzer.ingest.database import connect
from analyzer.ingest.finalize import device_part_sql, finalize_run
from analyzer.ingest.metadata.discover import Unreadable, absent_reason, printable, scan
from analyzer.ingest.metadata.no_export_note import no_export_note
from analyzer.ingest.metadata.run_metadata import read_run_metadata
from analyzer.ingest.model import ExportSource, IngestError, Problem, ReadContext
from analyzer.ingest.readers import READERS
from analyzer.ingest.sql_values import in_list
from analyzer.ingest.timeline_beside import TIMELINE, budget, read_beside, timeline_beside
from analyzer.stop_signal import stop_requested

if TYPE_CHECKING:
    from analyzer.ingest.together.together import Together


@dataclass
class Ingested:
    """The result of reading a path: a connection with every run's tables, and what went wrong."""

    con: duckdb.DuckDBPyConnection
    run_ids: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    sources: list[ExportSource] = field(default_factory=list)


# Readers run first: msprof's task_time rows, in before the timeline JSON's device tasks, supersede
# those (timeline_store.without_superseded), which are then never inserted.
_FIRST = ("task_time",)


def _read_source(
    con: duckdb.DuckDBPyConnection,
    source: ExportSource,
    left_out_kinds: frozenset[str],
    pre_read: Mapping[str, ReadContext] | None = None,
) -> ReadContext:
    """Read one export; ``pre_read``: its kinds read already (together with other exports), kind -> the part
    context their problems went to."""
    ctx = ReadContext(run_id=source.source_id, source=source, left_out_kinds=left_out_kinds)
    meta = read_run_metadata(ctx)
    kinds = [kind for kind in READERS if source.files.get(kind)]
    pre_read = pre_read or {}
    parts = {kind: pre_read[kind] if kind in pre_read else ctx.part() for kind in kinds}
    unread = [kind for kind in kinds if kind not in pre_read]
    for kind in [kind for kind in unread if kind in _FIRST]:
        _guarded(READERS[kind], con, source.files[kind], parts[kind])
    rest = [kind for kind in unread if kind not in _FIRST]  # in READERS order
    beside = read_beside(rest, source.files, partial(budget, con))
    with _timeline_beside(con, source, parts[TIMELINE]) if beside else nullcontext():
        for kind in rest:
            if not (beside and kind == TIMELINE):
                _guarded(READERS[kind], con, source.files[kind], parts[kind])
    for kind in kinds:  # problems in READERS order, whichever reader ran first
        ctx.absorb(parts[kind])
    finalize_run(con, ctx, meta)
    return ctx


def _timeline_beside(
    con: duckdb.DuckDBPyConnection, source: ExportSource, part: ReadContext
) -> AbstractContextManager[None]:
    """The export's timeline read on a thread while the block reads its other kinds (``timeline_beside``)."""
    return timeline_beside(con, partial(_guarded, READERS[TIMELINE], paths=source.files[TIMELINE], ctx=part))


def _guarded(reader: Callable, con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> None:
    """Run one reader; any failure becomes a problem on its file, never a traceback."""
    try:
        reader(con, paths, ctx)
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
        first = first_line(exc)
        ctx.report(paths[0], "", "error", f"could not be read: {first}", "the file is skipped; the rest is used")


def usable_run_ids(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> list[str]:
    """The runs holding at least one device task with a start time and a duration (what analyses need)."""
    rows = con.execute(
        f"SELECT DISTINCT run_id FROM ops WHERE {in_list('run_id')} "
        "AND start_ns IS NOT NULL AND dur_us IS NOT NULL ORDER BY run_id",
        [run_ids],
    ).fetchall()
    return [r[0] for r in rows]


def load_export(
    path: Path | str,
    con: duckdb.DuckDBPyConnection | None = None,
    progress: Callable[[ExportSource], None] | None = None,
    left_out_kinds: frozenset[str] = frozenset(),
    sources: list[ExportSource] | None = None,
    unreadable: Sequence[Unreadable] = (),
) -> Ingested:
    """Discover and read every export under ``path``.

    Timeline events of ``left_out_kinds`` are not stored: for a caller that never reads them (a
    diagnosis whose rules read no flow or overlap segment, ``rule_engine.timeline_use``), where they
    would be two thirds of a msprof timeline's rows.

    ``sources``: the exports to read, when the caller has discovered them already (a job's ranks
    holding summaries only are read by analyzer.job instead); may be empty. ``unreadable``: the
    folders the caller's scan could not read (``discover.scan``), each recorded as a problem.

    Raises IngestError when the path does not exist or holds no export at all. An export whose
    files are all unusable still yields a run with its problems recorded; callers decide whether
    that is fatal.
    """
    path = Path(path)
    if not path.exists():
        raise IngestError(absent_reason(path), printable(path))
    if sources is not None:
        return _read_sources(con or connect(), sources, progress, left_out_kinds, unreadable)
    sources, unreadable = scan(path)
    if not sources and unreadable:
        raise IngestError(unreadable[0].reason, unreadable[0].path)
    if not sources:
        raise IngestError(
            "no Ascend profiling export found (looked for ASCEND_PROFILER_OUTPUT/, "
            "PROF_*/mindstudio_profiler_output/, msprof_*.db, ascend_pytorch_profiler_*.db, "
            "kernel_details.csv, op_summary_*.csv, trace_view.json)" + _links_note(path) + no_export_note(path),
            path,
        )
    con = con or connect()
    return _read_sources(con, sources, progress, left_out_kinds, unreadable)


def _read_sources(
    con: duckdb.DuckDBPyConnection,
    sources: list[ExportSource],
    progress: Callable[[ExportSource], None] | None,
    left_out_kinds: frozenset[str],
    unreadable: Sequence[Unreadable],
) -> Ingested:
    result = reading_started(con, sources, unreadable)
    together = _read_together(con, sources, left_out_kinds)
    for source in sources:
        if progress:
            progress(source)
        if together and source.source_id in together.done:  # read together: nothing to report, its runs known
            result.run_ids.extend(together.runs_of(source.source_id))
            continue
        try:
            pre_read = together.pre_read.get(source.source_id) if together else None
            ctx = _read_source(con, source, left_out_kinds, pre_read)
        except (duckdb.OutOfMemoryException, duckdb.InterruptException):
            raise
        except Exception as exc:  # one export that cannot be read never ends the reading of the others
            if stop_requested():
                raise
            first = first_line(exc)
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
        result.problems.extend(_under_export(p, source) for p in ctx.problems)
        result.run_ids.extend(_runs_of(con, source))
    return result


def reading_started(
    con: duckdb.DuckDBPyConnection, sources: list[ExportSource], unreadable: Sequence[Unreadable]
) -> Ingested:
    """The result of reading ``sources`` before any of them is read: no run yet, and a problem for each folder
    the scan could not read (``unreadable``)."""
    problems = [Problem(u.path, "", "error", u.reason, "the rest of the tree is read") for u in unreadable]
    return Ingested(con=con, problems=problems, sources=sources)


def _read_together(
    con: duckdb.DuckDBPyConnection, sources: list[ExportSource], left_out_kinds: frozenset[str]
) -> Together | None:
    """What ``read_exports_together`` read of ``sources``; None for a single export, which is always read
    alone, so that its reading never loads the set-wise reader (nor pyarrow, which that loads)."""
    if len(sources) < 2:
        return None
    from analyzer.ingest.together.together import read_exports_together

    return read_exports_together(con, sources, left_out_kinds)


def _runs_of(con: duckdb.DuckDBPyConnection, source: ExportSource) -> list[str]:
    """The runs of an export just read: its own, or one per device (``device_part_sql``: not another export's
    runs whose name LIKE would match)."""
    return [
        r[0]
        for r in con.execute(
            f"SELECT run_id FROM runs WHERE run_id = $id OR {device_part_sql('run_id', '$id')} ORDER BY run_id",
            {"id": source.source_id},
        ).fetchall()
    ]


def _under_export(problem: Problem, source: ExportSource) -> Problem:
    """The problem with its file named from the path the user gave, so that a tree's messages say which export."""
    if source.rel_path in ("", "."):
        return problem
    return replace(problem, file=f"{source.rel_path}/{problem.file or '(export)'}")


def _links_note(path: Path) -> str:
    """Why a folder of symbolic links to exports finds none: links are not followed (they may loop)."""
    try:
        links = sorted(p.name for p in path.iterdir() if p.is_symlink() and p.is_dir())
    except OSError:
        return ""
    if not links:
        return ""
    return (
        f"; symbolic links to folders are not followed ({len(links)} here, first: {links[0]}): "
        "copy the exports into one folder, or give a link's own path"
    )
