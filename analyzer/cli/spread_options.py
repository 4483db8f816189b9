"""`diagnose PATH --executor local|dask [--scheduler URL] [--jobs N]`: who reads the exports of a job or a tree."""

from __future__ import annotations

import argparse
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from analyzer.cli.usage import UsageError


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
    p.add_argument(
        "--scheduler",
        metavar="URL",
        help="with --executor dask: a running scheduler, e.g. tcp://HOST:8786 (default: a local cluster of --jobs "
        "workers); its workers must see the exports at the same paths",
    )
    p.add_argument("--jobs", type=int, metavar="N", help="with --executor: worker processes (default: CPU count)")


def check_spread_options(args: argparse.Namespace) -> None:
    """The option mistakes, said before any work (UsageError, exit 2)."""
    if args.scheduler and args.executor != "dask":
        raise UsageError("--scheduler needs --executor dask")
    if args.jobs is not None and args.executor is None:
        raise UsageError("--jobs needs --executor local or --executor dask (without it the exports are read here)")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.executor and args.path is None:
        raise UsageError(f"--executor {args.executor}: give an export PATH to read (--db alone reads no export)")


def open_spread_executor(args: argparse.Namespace) -> AbstractContextManager[Any]:
    """The executor the options ask for, to enter (ExecutorError when it cannot start), or a context of None."""
    if args.executor is None:
        return nullcontext()
    from analyzer.cli.batch_cmd import open_executor
    from analyzer.runs.executor import default_jobs

    jobs = args.jobs if args.jobs is not None else default_jobs()
    return open_executor(argparse.Namespace(executor=args.executor, scheduler=args.scheduler, jobs=jobs))
