"""Plan a batch: every export under a folder tree and inside its archives, each with a fingerprint and a label."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from analyzer.duckdb_connect import connect_offline
from analyzer.ingest.metadata.discover import Scanned, printable, scan
from analyzer.ingest.metadata.fingerprint import hash_file_sample, source_fingerprint
from analyzer.job.grouping import Job, find_jobs
from analyzer.runs.archives import DEFAULT_LIMITS, ArchiveError, Limits, is_archive, unpack
from analyzer.runs.catalog import commit_run, known_fingerprints, record_failure
from analyzer.runs.executor import Executor, run_tasks
from analyzer.runs.job_catalog import (
    JobTask,
    analyze_job,
    commit_job,
    job_fingerprint,
    job_label,
    known_job_fingerprints,
)
from analyzer.runs.scratch import scratch_folder
from analyzer.runs.work import RunTask, WorkSettings


@dataclass
class BatchPlan:
    """The exports to analyse (sorted by label, one per fingerprint) and the archives that failed."""

    tasks: list[RunTask] = field(default_factory=list)
    failures: list[dict[str, str]] = field(default_factory=list)  # rows of the failures table
    unreadable: list[dict[str, str]] = field(default_factory=list)  # folders of the tree: failures rows too
    job_parts: list[str] = field(default_factory=list)  # labels of job ranks holding summaries only
    jobs: list[tuple[Job, str]] = field(default_factory=list)  # each job found, with its label


def file_fingerprint(path: Path) -> str:
    """Fingerprint of one file (size, first and last MiB), for archives that fail."""
    h = hashlib.sha256()
    hash_file_sample(h, path, path.name)
    return h.hexdigest()[:16]


def _jobs_among(sources: list, folder: Path) -> list[Job]:
    """The jobs among the exports of one folder."""
    con = connect_offline()
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
        tasks.append(RunTask(str(source.root), label, fingerprint))
    return tasks


def _unreadable_row(label: str, reason: str) -> dict[str, str]:
    return {"path": label or ".", "fingerprint": hashlib.sha256(label.encode()).hexdigest()[:16], "message": reason}


def _archives_under(root: Path) -> list[Path]:
    if root.is_file():
        return [root] if is_archive(root) else []
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and is_archive(p))


def plan_batch(root: Path, workdir: Path, limits: Limits = DEFAULT_LIMITS, scanned: Scanned | None = None) -> BatchPlan:
    """Find every export under ``root`` (a folder or an archive; ``scanned``: the folder's ``discover.scan``
    when the caller has it already); archives are unpacked into ``workdir``.

    Labels are paths relative to ``root``; an export inside an archive is labelled
    'sub/runs.zip!/inner/folder'. Two exports with one fingerprint are analysed once (the
    first label wins).
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
    seen: set[str] = set()
    for task in sorted(tasks, key=lambda t: t.label):
        if task.fingerprint not in seen:
            seen.add(task.fingerprint)
            plan.tasks.append(task)
    return plan


@dataclass
class BatchOutcome:
    """What a batch did: runs catalogued now, exports skipped as known, failures recorded now."""

    catalogued: list[str] = field(default_factory=list)  # labels
    skipped: list[str] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)
    known_usable: int = 0  # runs of the catalog that this batch skipped because they were usable before
    unreadable: list[dict[str, str]] = field(default_factory=list)  # folders of the tree that could not be read
    partial: list[tuple[str, list[str]]] = field(default_factory=list)  # (label, what was lost) of runs catalogued
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
    """Plan, skip known fingerprints, analyse the rest on ``executor``, and commit each run as it finishes
    into the catalog open on ``con`` (``catalog.open_catalog``).

    ``on_start(n)`` is told how many exports will be analysed; ``on_done(task, status)`` is
    called after each commit with status 'catalogued' or 'failed'. ``scanned`` is the root folder's
    ``discover.scan`` when the caller has it already.
    """
    outcome = BatchOutcome()
    # On a stop (Ctrl-C, SIGTERM, an error) the workers are ended first, then the extractions removed.
    with scratch_folder() as tmp, ExitStack() as stack:
        plan = plan_batch(root, Path(tmp), limits, scanned)
        outcome.job_parts = plan.job_parts
        known = known_fingerprints(con)
        for row in plan.unreadable:  # reported on every batch: the folder is never catalogued
            record_failure(con, row)
            outcome.unreadable.append(row)
        for row in plan.failures:
            if row["fingerprint"] not in known:
                record_failure(con, row)
                outcome.failed.append(row)
        todo = [t for t in plan.tasks if t.fingerprint not in known]
        outcome.skipped = [t.label for t in plan.tasks if t.fingerprint in known]
        outcome.known_usable = _usable_count(con, [t.fingerprint for t in plan.tasks if t.fingerprint in known])
        if on_start:
            on_start(len(todo))
        results = stack.enter_context(closing(run_tasks(todo, settings, executor)))
        for task, tables in results:
            commit_run(con, tables)
            status = "failed" if "failures" in tables else "catalogued"
            if status == "failed":
                outcome.failed.extend(tables["failures"].to_pylist())
            else:
                outcome.catalogued.append(task.label)
                lost = _lost_files(tables)
                if lost:
                    outcome.partial.append((task.label, lost))
            if on_done:
                on_done(task, status)
        outcome.jobs = _commit_jobs(con, plan.jobs, settings, executor, stack, outcome)
    return outcome


def _lost_files(tables: dict, name: str = "run_problems") -> list[str]:
    """What a catalogued run (or job: ``name`` 'job_problems') lost: its 'error' problems, as 'file: problem'."""
    problems = tables.get(name)
    if problems is None:
        return []
    rows = [r for r in problems.to_pylist() if r["severity"] == "error"]
    return sorted({f"{r['file'] or '(export)'}: {r['problem']}" for r in rows})


def _usable_count(con, fingerprints: list[str]) -> int:
    return con.execute(
        "SELECT count(DISTINCT fingerprint) FROM catalog_runs WHERE fingerprint IN (SELECT unnest(?::VARCHAR[]))",
        [fingerprints],
    ).fetchall()[0][0]


def _commit_jobs(
    con: duckdb.DuckDBPyConnection,
    jobs: list[tuple[Job, str]],
    settings: WorkSettings,
    executor: Executor,
    stack: ExitStack,
    outcome: BatchOutcome,
) -> list[str]:
    """Analyse each job not known yet (by its fingerprint) on ``executor`` and commit it as it finishes;
    returns the labels of those catalogued, in plan order. A job that fails gives a failures row."""
    known = known_job_fingerprints(con)
    todo = [JobTask(job, label, job_fingerprint(job)) for job, label in jobs]
    todo = [t for t in todo if t.fingerprint not in known]
    if not todo:
        return []
    done = set()
    for task, tables in stack.enter_context(closing(run_tasks(todo, settings, executor, analyze_job))):
        if "failures" in tables:
            commit_run(con, tables)
            outcome.failed.extend(tables["failures"].to_pylist())
        else:
            commit_job(con, tables)
            done.add(task.label)
            if lost := _lost_files(tables, "job_problems"):
                outcome.partial.append((task.label, lost))
    return [t.label for t in todo if t.label in done]
