"""The command line: parse arguments, call the API, map errors to exit codes. No analysis lives here.

Exit codes: 0 done; 1 findings at or above --fail-on (or a regression with --fail-on-regression);
2 bad usage (an option, output path or environment variable), input that could not be used, or an
output that could not be written; 3 (diagnose) a diagnosis was written but part of the input was lost.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import traceback
from typing import NoReturn

import duckdb

from analyzer.cli import commands
from analyzer.cli.console import err, tolerant_streams
from analyzer.collector import collect_rarely
from analyzer.errors import TriageError, first_line
from analyzer.execution import threads
from analyzer.execution.memory import ENV, memory_limit_bytes
from analyzer.stop_signal import stop_on_signals, stop_requested
from analyzer.version import __version__


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # exit 2 with a one-line message, as argparse does, never a trace
        self.print_usage(sys.stderr)
        err(f"{self.prog}: error: {message}")
        raise SystemExit(2)


_MEMORY_HELP = (
    "DuckDB's memory limit, e.g. 512MB or 4GB; past it DuckDB spills to a private temporary folder "
    f"(default: {ENV}, else a quarter of the machine's memory, at most 4 GiB; at most 1 GiB for a multi-rank job)"
)
_THREADS_HELP = (
    f"DuckDB's threads per process (default: {threads.ENV}, else one per core, one for an export under "
    f"{threads.SMALL_INPUT_BYTES // 2**20} MB; a batch gives each of its N workers an N-th of the cores)"
)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv``, only the named command's module is imported (fast start-up)."""
    parser = _Parser(prog="npu-triage", description="Diagnose Huawei Ascend NPU profiling exports.")
    parser.add_argument("--version", action="version", version=f"npu-triage {__version__}")
    parser.add_argument("--memory-limit", metavar="SIZE", help=_MEMORY_HELP)
    parser.add_argument("--threads", metavar="N", help=_THREADS_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    modules = commands.all_modules() if argv is None else commands.modules_for(argv)
    for module in modules:
        module.register(sub)
    for command in sub.choices.values():  # also accepted after the command's name
        command.add_argument("--memory-limit", metavar="SIZE", default=argparse.SUPPRESS, help=_MEMORY_HELP)
        command.add_argument("--threads", metavar="N", default=argparse.SUPPRESS, help=_THREADS_HELP)
    return parser


def _set_limits(memory_option: str | None, threads_option: str | None) -> None:
    """Check the memory limit and the thread count (option, else environment) and pass them on through
    the environment, which the connections of this process and of its batch workers read
    (``execution/memory.py``, ``execution/threads.py``)."""
    limit = memory_limit_bytes(memory_option)
    count = threads.thread_count(threads_option)  # at most the cores
    if threads_option is not None and (note := threads.capped(int(threads_option), "--threads")[1]):
        err(f"npu-triage: note: {note}")
    if memory_option is not None:
        os.environ[ENV] = f"{limit}B"
    if threads_option is not None:
        os.environ[threads.ENV] = str(count)


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit code."""
    tolerant_streams()
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    with stop_on_signals():
        try:
            _set_limits(args.memory_limit, args.threads)
            return int(args.func(args) or 0)
        except BaseException as exc:
            return _exit_code(exc)


def _exit_code(exc: BaseException) -> int:
    """The exit code and one-line message of a command that raised ``exc``: 128 + the signal of a stop
    (130 Ctrl-C, 143 SIGTERM), whatever error it ended the work with; else 2 with what went wrong."""
    stop = stop_requested()
    if stop is not None or isinstance(exc, KeyboardInterrupt):
        err(f"npu-triage: {'terminated (SIGTERM)' if stop == signal.SIGTERM else 'interrupted'}")
        return 128 + (stop or signal.SIGINT)
    if isinstance(exc, TriageError):  # every error meant for the user: its one line and its exit code
        err(f"npu-triage: {exc}")
        return exc.exit_code
    if isinstance(exc, duckdb.OutOfMemoryException):
        err(f"npu-triage: out of memory: {first_line(exc)} (raise --memory-limit or {ENV}, e.g. 8GB)")
        return 2
    if isinstance(exc, BrokenPipeError):
        return 0
    if not isinstance(exc, Exception):  # SystemExit and the like keep their meaning
        raise exc
    # the last line of defence: a message, never a traceback
    if os.environ.get("NPU_TRIAGE_DEBUG"):
        traceback.print_exception(exc)
    err(f"npu-triage: internal error: {type(exc).__name__}: {exc} (set NPU_TRIAGE_DEBUG=1 for details)")
    return 2


def run() -> NoReturn:
    """The program (``npu-triage``, ``python -m analyzer``): ``main()`` on the process's arguments, the
    collector run rarely (analyzer/collector.py)."""
    collect_rarely()
    sys.exit(main())
