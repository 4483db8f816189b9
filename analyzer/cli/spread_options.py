"""`--executor local|dask [--scheduler URL] [--jobs N]`: who reads the exports of a job or a tree (diagnose), or of
a batch (batch), and the executor those options ask for."""

from __future__ import annotations

import argparse
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from analyzer.cli.console import err
from analyzer.cli.usage import UsageError

if TYPE_CHECKING:
    from analyzer.runs.dask_executor import DaskExecutor
    from analyzer.runs.executor import LocalPool


def add_spread_options(p: argparse.ArgumentParser) -> None:
    """--executor, --scheduler and --jobs of a command that reads many exports (a job's ranks, a tree)."""
    p.add_argument(
        "--executor",
        choices=("local", "dask"),
        help="read the exports of a job (or of a tree) in chunks on worker processes, then judge them here: "
        "local: a pool of --jobs processes; dask: a Dask cluster, local or at --scheduler (needs pip install "
        "'npu-triage[dask]'). Default: read them in this process. A single export is read here all the same; "
        "the diagnosis is the same either way",
    )
    add_scheduler_option(p)
    p.add_argument("--jobs", type=int, metavar="N", help="with --executor: worker processes (default: CPU count)")


def add_scheduler_option(p: argparse.ArgumentParser) -> None:
    """--scheduler, of every command with --executor."""
    p.add_argument(
        "--scheduler",
        metavar="URL",
        help="with --executor dask: a running scheduler, e.g. tcp://HOST:8786 (default: start a local cluster of "
        "--jobs worker processes); its workers must see the exports at the same paths",
    )


def _scheduler_problem(kind: str | None, scheduler: str | None) -> str | None:
    """The mistake of a --scheduler without --executor dask, or None."""
    return "--scheduler needs --executor dask" if scheduler and kind != "dask" else None


def check_spread_options(args: argparse.Namespace) -> None:
    """The option mistakes, said before any work (UsageError, exit 2)."""
    if problem := _scheduler_problem(args.executor, args.scheduler):
        raise UsageError(problem)
    if args.jobs is not None and args.executor is None:
        raise UsageError("--jobs needs --executor local or --executor dask (without it the exports are read here)")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.executor and args.path is None:
        raise UsageError(f"--executor {args.executor}: give an export PATH to read (--db alone reads no export)")


def executor_for(kind: str, scheduler: str | None, jobs: int | None) -> LocalPool | DaskExecutor:
    """The executor of ``--executor kind`` (a context manager: its workers start on entering) with ``jobs``
    workers (None: the CPU count); ExecutorError when --scheduler is given without dask or it cannot start."""
    from analyzer.runs.dask_executor import DaskExecutor, ExecutorError
    from analyzer.runs.executor import LocalPool, default_jobs

    if problem := _scheduler_problem(kind, scheduler):
        raise ExecutorError(problem)
    workers = jobs if jobs is not None else default_jobs()
    if kind == "dask":
        return DaskExecutor(scheduler, workers, note=_note)
    return LocalPool(workers, note=_note)


def _note(text: str) -> None:
    err(f"npu-triage: note: {text}")


def open_spread_executor(args: argparse.Namespace) -> AbstractContextManager[Any]:
    """The executor the options ask for, to enter (ExecutorError when it cannot start), or a context of None."""
    if args.executor is None:
        return nullcontext()
    return executor_for(args.executor, args.scheduler, args.jobs)
