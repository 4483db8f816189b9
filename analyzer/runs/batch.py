"""Plan a batch: every export under a folder tree and inside its archives, each with a fingerprint and a label."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from contextlib import ExitStack, closing
from dataclasses import dataclass, field, replace
from pathlib import Path

import duckdb
import pyarrow as pa

from analyzer.duckdb_connect import connect_offline
from analyzer.ingest.metadata.discover import Scanned, printable, scan
from analyzer.ingest.metadata.fingerprint import hash_file_sample, source_fingerprint
from analyzer.ingest.sql_values import in_list
from analyzer.job.grouping import Job, find_jobs
from analyzer.runs.archives import DEFAULT_LIMITS, ArchiveError, Limits, is_archive, unpack
from analyzer.runs.catalog import catalogued_paths, commit_run, commit_runs, record_failure
from analyzer.runs.chunks import run_chunked
from analyzer.runs.executor import Executor
from analyzer.runs.history import earlier_failures, earlier_losses, lost_lines, record_copies
from analyzer.runs.job_catalog import (
    JobTask,
    commit_jobs,
    job_fingerprint,
    job_label,
    known_job_fingerprints,
)
from analyzer.runs.job_ranks import RankHold
from analyzer.runs.scratch import scratch_folder
from analyzer.runs.work import RunTask, WorkSettings


@dataclass
class BatchPlan:
    """The exports found (sorted by label; identical copies share a fingerprint) and the archives that failed."""

    tasks: list[RunTask] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)  # rows of the failures table
    unreadable: list[dict[str, str]] = field(default_factory=list)  # folders of the tree: failures rows too
    job_parts: list[str] = field(default_factory=list)  # labels of job ranks holding summaries only
    jobs: list[tuple[Job, str]] = field(default_factory=list)  # each job found, with its label
    prints: dict[str, str] = field(default_factory=dict)  # export folder -> fingerprint: hashed once, jobs reuse it


def file_fingerprint(path: Path) -> str:
    """Fingerprint of one file (size, first and last MiB), for archives that fail."""
    h = hashlib.sha256()
    hash_file_sample(h, path, path.name)
    return h.hexdigest()[:16]


def _jobs_among(sources: list, folder: Path) -> list[Job]:
    """The jobs among the exports of one folder."""
    con = connect_offline(spill_now=False)
    try:
        return find_jobs(con, sources, folder)
    finally:
        con.close()


def _tasks_in(folder: Path, label_prefix: str, plan: BatchPlan, scanned: Scanned | None = None) -> list[RunTask]:
    """The runs under ``folder`` (``scanned``: its ``discover.scan`` when the caller has it already); its jobs
    go to ``plan.jobs``, and the labels of job ranks holding summaries only (parts of a job, not runs of their
    own: neither catalogued nor failures) to ``plan.job_parts``; the folders and exports that cannot be read
    go to ``plan.unreadable``."""
    tasks = []
    sources, unreadable = scanned or scan(folder)
    top = printable(folder)
    for item in unreadable:
        plan.unreadable.append(_unreadable_row(label_prefix + item.path.removeprefix(top).lstrip("/"), item.reason))
    jobs = _jobs_among(sources, folder)
    plan.jobs += [(job, job_label(job, label_prefix, folder)) for job in jobs]
    parts = {r.source.source_id for job in jobs for r in job.ranks if not r.has_kernels}
    for source in sources:
        rel = source.rel_path if source.rel_path != "." else ""
        label = f"{label_prefix}{rel}" if label_prefix else (rel or ".")
        if label_prefix and not rel:
            label = label_prefix.removesuffix("!/")
        if source.source_id in parts:
            plan.job_parts.append(label)
            continue
        try:
            fingerprint = source_fingerprint(source)
        except OSError as exc:
            plan.unreadable.append(_unreadable_row(label, f"cannot be read: {exc.strerror or exc}"))
            continue
        plan.prints[str(source.root)] = fingerprint
        tasks.append(RunTask(str(source.root), label, fingerprint))
    return tasks


def _unreadable_row(label: str, reason: str) -> dict[str, str]:
    return {"path": label or ".", "fingerprint": hashlib.sha256(label.encode()).hexdigest()[:16], "message": reason}


def _archives_under(root: Path) -> list[Path]:
    if root.is_file():
        return [root] if is_archive(root) else []
    # the name first: the tree's every other file then costs no stat
    return sorted(p for p in root.rglob("*") if is_archive(p) and p.is_file() and not p.is_symlink())


def plan_batch(root: Path, workdir: Path, limits: Limits = DEFAULT_LIMITS, scanned: Scanned | None = None) -> BatchPlan:
    """Find every export under ``root`` (a folder or an archive; ``scanned``: the folder's ``discover.scan``
    when the caller has it already); archives are unpacked into ``workdir``.

    Labels are paths relative to ``root``; an export inside an archive is labelled
    'sub/runs.zip!/inner/folder'. Every export is a task, identical copies too (``run_batch``
    analyses one of them).
    """
    root = root.resolve()
    plan = BatchPlan()
    tasks = _tasks_in(root, "", plan, scanned) if root.is_dir() else []
    for i, archive in enumerate(_archives_under(root)):
        rel = archive.name if archive == root else archive.relative_to(root).as_posix()
        try:
            unpacked = unpack(archive, workdir / f"a{i:05d}", limits)
        except ArchiveError as exc:
            plan.failures.append({"path": rel, "fingerprint": file_fingerprint(archive), "message": str(exc)})
            continue
        if unpacked.refused:
            plan.failures.append(
                {
                    "path": rel,
                    "fingerprint": file_fingerprint(archive),
                    "message": "entries refused: "
                    + ", ".join(unpacked.refused[:10])
                    + (f" and {len(unpacked.refused) - 10} more" if len(unpacked.refused) > 10 else "")
                    + "; the rest of the archive was used",
                }
            )
        tasks += _tasks_in(unpacked.folder, f"{rel}!/", plan)
    plan.tasks = sorted(tasks, key=lambda t: t.label)
    return plan


@dataclass
class BatchOutcome:
    """What a batch found: runs catalogued now, known job ranks judged again with their job, runs and failures
    catalogued by an earlier batch, copies."""

    catalogued: list[str] = field(default_factory=list)  # labels of runs new to the catalog
    # their rows of catalog_runs: an export of several devices is a run per device there
    catalogued_runs: int = 0
    rejudged: list[str] = field(default_factory=list)  # labels of runs catalogued before, judged again with their job
    skipped: list[str] = field(default_factory=list)  # labels of runs catalogued by an earlier batch
    failed: list[dict[str, str]] = field(default_factory=list)  # failures rows recorded now
    failed_before: list[dict[str, str]] = field(default_factory=list)  # failures of this tree, recorded earlier
    known_usable: int = 0  # runs of the catalog that this batch skipped because they were usable before
    unreadable: list[dict[str, str]] = field(default_factory=list)  # folders of the tree that could not be read
    # (label, what was lost, the catalog table saying it: run_problems or job_problems), found now or earlier
    partial: list[tuple[str, list[str], str]] = field(default_factory=list)
    copies: list[tuple[str, str]] = field(default_factory=list)  # (label, the label it is a copy of), by label
    job_parts: list[str] = field(default_factory=list)  # job ranks holding summaries only, left out
    jobs: list[str] = field(default_factory=list)  # labels of the jobs catalogued now


def run_batch(
    root: Path,
    con: duckdb.DuckDBPyConnection,
    settings: WorkSettings,
    executor: Executor,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[RunTask, str], None] | None = None,
    limits: Limits = DEFAULT_LIMITS,
    scanned: Scanned | None = None,
) -> BatchOutcome:
    """Plan, set aside copies and known fingerprints, analyse the rest on ``executor``, and commit each run as
    it finishes into the catalog open on ``con`` (``catalog.open_catalog``).

    ``on_start(n)`` is told how many exports will be analysed; ``on_done(task, status)`` is
    called after each commit with status 'catalogued', 'rejudged' (a run catalogued before, judged again with
    its job) or 'failed'. ``scanned`` is the root folder's
    ``discover.scan`` when the caller has it already.
    """
    outcome = BatchOutcome()
    # On a stop (Ctrl-C, SIGTERM, an error) the workers are ended first, then the extractions removed.
    with scratch_folder() as tmp, ExitStack() as stack:
        plan = plan_batch(root, Path(tmp), limits, scanned)
        outcome.job_parts = plan.job_parts
        found = [JobTask(job, label, job_fingerprint(job, plan.prints)) for job, label in plan.jobs]
        jobs = _jobs_to_do(con, found, outcome)
        # A job judged now explains its ranks' findings: its ranks are judged now too, catalogued before or not.
        hold = RankHold(jobs, settings)
        ranks = hold.paths
        todo = [
            replace(t, job_rank=True) if t.export_path in ranks else t for t in _sort_out(con, plan, outcome, ranks)
        ]
        before = _Before(
            frozenset(_usable_prints(con, [t.fingerprint for t in todo if t.job_rank])),
            frozenset(t.fingerprint for t in found),
        )
        if on_start:
            on_start(len(todo))
        jobs_done: set[str] = set()
        for done in stack.enter_context(closing(run_chunked(todo, settings, executor, jobs))):
            jobs_done.update(_commit_done(con, done, hold, outcome, on_done, before))
        outcome.jobs = [t.label for t in jobs if t.label in jobs_done]  # in plan order
    return outcome


@dataclass(frozen=True)
class _Before:
    """What the catalog held of the tree before the batch committed anything."""

    rank_prints: frozenset[str]  # the job ranks judged again that it held runs of: re-judged, no new runs
    job_prints: frozenset[str]  # every job of the tree, known or not: none is an earlier state of a job judged now


def _commit_done(
    con: duckdb.DuckDBPyConnection,
    done: list,
    hold: RankHold,
    outcome: BatchOutcome,
    on_done: Callable[[RunTask, str], None] | None,
    before: _Before,
) -> list[str]:
    """Commit what a chunk gave: its runs (one transaction; a job's ranks as ``hold`` says), or its jobs with
    the explained findings rows of their ranks committed before them; the labels of the jobs catalogued."""
    runs = hold.runs([(task, tables) for task, tables in done if isinstance(task, RunTask)])
    if runs:
        commit_runs(con, [tables for _, tables in runs])  # a chunk's runs: one transaction
    for task, tables in runs:
        status = _account(task, tables, outcome, task.fingerprint in before.rank_prints)
        if on_done:
            on_done(task, status)
    judged = [(j, t) for j, t in done if isinstance(j, JobTask)]
    explained = [found for job, tables in judged for found in hold.job(job, tables)]
    return _commit_jobs(con, judged, outcome, explained, before.job_prints)


def _sort_out(con: duckdb.DuckDBPyConnection, plan: BatchPlan, outcome: BatchOutcome, again: set[str]) -> list[RunTask]:
    """Record the folders not read and the archives that failed, and the copies; tell ``outcome`` what the
    catalog knows of the tree already; return the exports to analyse: those not catalogued yet, and those of
    ``again`` (export folders: the ranks of a job judged now), catalogued or not."""
    homes = catalogued_paths(con)
    for row in plan.unreadable:  # reported on every batch: the folder is never catalogued
        record_failure(con, row)
        outcome.unreadable.append(row)
    for row in plan.failures:
        if row["fingerprint"] in homes:
            outcome.failed_before.append(row)
        else:
            record_failure(con, row)
            outcome.failed.append(row)
    originals, copies = _originals(plan.tasks, homes)
    record_copies(con, [(t.label, t.fingerprint, of) for t, of in copies])
    outcome.copies = [(t.label, of) for t, of in copies]
    known = [t for t in originals if t.fingerprint in homes and t.export_path not in again]
    # the contents of the tree the catalog holds: those of its known originals and of the copies standing in
    usable = set(_usable_prints(con, [t.fingerprint for t in plan.tasks if t.fingerprint in homes]))
    outcome.known_usable = len(usable)
    _recall(con, known, outcome, _stand_ins(plan.tasks, copies), usable)
    return [t for t in originals if t.fingerprint not in homes or t.export_path in again]


def _stand_ins(tasks: list[RunTask], copies: list[tuple[RunTask, str]]) -> list[RunTask]:
    """Per content whose original lies outside this tree (catalogued from elsewhere), its first copy here: what
    the content lost is said under that copy's label, as a batch of this tree into a new catalog would."""
    labels = {t.label for t in tasks}
    first: dict[str, RunTask] = {}
    for task, original in copies:
        if original not in labels:
            first.setdefault(task.fingerprint, task)
    return list(first.values())


def _originals(tasks: list[RunTask], homes: dict[str, list[str]]) -> tuple[list[RunTask], list[tuple[RunTask, str]]]:
    """The tasks that are no copy, and each copy with the label of its original: per fingerprint, the task at a
    path the catalog holds it under, else (catalogued elsewhere) none, else the first by label."""
    groups: dict[str, list[RunTask]] = {}
    for task in tasks:
        groups.setdefault(task.fingerprint, []).append(task)
    originals, copies = [], []
    for fingerprint, group in groups.items():
        paths = homes.get(fingerprint, [])
        first = next((t for t in group if t.label in paths), None if paths else group[0])
        originals += [first] if first else []
        copies += [(t, first.label if first else paths[0]) for t in group if t is not first]
    return sorted(originals, key=lambda t: t.label), sorted(copies, key=lambda c: c[0].label)


def _recall(
    con: duckdb.DuckDBPyConnection,
    known: list[RunTask],
    outcome: BatchOutcome,
    stand_ins: list[RunTask],
    usable: set[str],
) -> None:
    """What an earlier batch found of the ``known`` exports and of the copies standing in for an original
    outside the tree (``usable``: the fingerprints of theirs the catalog holds runs of): runs (and what they
    lost) or failures. Only the known ones count as skipped."""
    prints = [t.fingerprint for t in [*known, *stand_ins]]
    failures, losses = earlier_failures(con, prints), earlier_losses(con, prints, "run_problems")
    standing_in = set(stand_ins)
    for task in sorted([*known, *stand_ins], key=lambda t: t.label):
        if task.fingerprint in usable:
            outcome.skipped += [] if task in standing_in else [task.label]
            if task.fingerprint in losses:
                outcome.partial.append((task.label, losses[task.fingerprint], "run_problems"))
        elif task.fingerprint in failures:
            row = {"path": task.label, "fingerprint": task.fingerprint, "message": failures[task.fingerprint]}
            outcome.failed_before.append(row)


def _account(task: RunTask, tables: dict, outcome: BatchOutcome, known: bool) -> str:
    """Tell ``outcome`` what one committed export gave (``known``: the catalog held its runs before, a job rank
    judged again with its job); returns 'catalogued', 'rejudged' or 'failed'."""
    if "failures" in tables:
        outcome.failed.extend(tables["failures"].to_pylist())
        return "failed"
    (outcome.rejudged if known else outcome.catalogued).append(task.label)
    if not known and "catalog_runs" in tables:
        outcome.catalogued_runs += tables["catalog_runs"].num_rows
    if lost := _lost_files(tables):
        outcome.partial.append((task.label, lost, "run_problems"))
    return "rejudged" if known else "catalogued"


def _lost_files(tables: dict, name: str = "run_problems") -> list[str]:
    """What a catalogued run (or job: ``name`` 'job_problems') lost: its 'error' problems, as 'file: problem'."""
    problems = tables.get(name)
    return lost_lines(problems.to_pylist()) if problems is not None else []


def _usable_prints(con: duckdb.DuckDBPyConnection, fingerprints: list[str]) -> list[str]:
    """Those of ``fingerprints`` that the catalog holds runs of."""
    rows = con.execute(
        f"SELECT DISTINCT fingerprint FROM catalog_runs WHERE {in_list('fingerprint')}",
        [fingerprints],
    ).fetchall()
    return [r[0] for r in rows]


def _jobs_to_do(con: duckdb.DuckDBPyConnection, todo: list[JobTask], outcome: BatchOutcome) -> list[JobTask]:
    """The jobs of the plan (``todo``) not known yet (by their fingerprint), in plan order; a job known already
    that lost input is told to ``outcome.partial`` again, one whose analysis failed to ``outcome.failed_before``
    (as a run's failure, it is tried again once one of its ranks' files changes, or when the machinery lost it)."""
    known = known_job_fingerprints(con)
    losses = earlier_losses(con, [t.fingerprint for t in todo if t.fingerprint in known], "job_problems")
    outcome.partial += [(t.label, losses[t.fingerprint], "job_problems") for t in todo if t.fingerprint in losses]
    failures = earlier_failures(con, [t.fingerprint for t in todo if t.fingerprint not in known])
    outcome.failed_before += [
        {"path": t.label, "fingerprint": t.fingerprint, "message": failures[t.fingerprint]}
        for t in todo
        if t.fingerprint in failures
    ]
    return [t for t in todo if t.fingerprint not in known and t.fingerprint not in failures]


def _commit_jobs(
    con: duckdb.DuckDBPyConnection,
    done: list[tuple[JobTask, dict]],
    outcome: BatchOutcome,
    explained: list[pa.Table],
    kept: frozenset[str],
) -> list[str]:
    """Commit a chunk's analysed jobs with the ``explained`` findings rows of their ranks catalogued before them
    (in one transaction), replacing the earlier states of each but the jobs of ``kept`` (fingerprints: the
    tree's), and their failures rows; the labels of those catalogued."""
    for tables in [tables for _, tables in done if "failures" in tables]:
        commit_run(con, tables)
        outcome.failed.extend(tables["failures"].to_pylist())
    judged = [(task, tables) for task, tables in done if "failures" not in tables]
    commit_jobs(con, [tables for _, tables in judged], explained, kept)
    for task, tables in judged:
        if lost := _lost_files(tables, "job_problems"):
            outcome.partial.append((task.label, lost, "job_problems"))
    return [task.label for task, _ in judged]
