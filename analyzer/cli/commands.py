"""The subcommands: name -> module with register(subparsers). Modules are imported only when used.

A command's module pulls in what its command needs (DuckDB, plotly, polars, the diff engine), so
the parser imports the one module that the command line names; `npu-triage --help` imports all.
"""

from __future__ import annotations

import importlib
from types import ModuleType

COMMANDS: dict[str, str] = {
    "diagnose": "analyzer.cli.diagnose_cmd",  # issue 3: rules -> ranked diagnosis, JSON/Markdown/HTML
    "ingest": "analyzer.cli.ingest_cmd",  # issue 2: exports -> normalized tables
    "schema": "analyzer.cli.schema_cmd",
    "rules": "analyzer.cli.rules_cmd",
    "batch": "analyzer.cli.batch_cmd",  # issue 5: many runs
    "runs": "analyzer.cli.runs_cmd",
    "query": "analyzer.cli.query_cmd",
    "export": "analyzer.cli.export_cmd",
    "diff": "analyzer.cli.diff_cmd",
    "sweep": "analyzer.cli.sweep_cmd",
    "logs": "analyzer.cli.logs_cmd",  # issue 48: CANN logs -> the first failure, the first failing rank
    "accuracy": "analyzer.cli.accuracy_cmd",  # issue 47: accuracy dumps against a reference
}


def modules_for(argv: list[str]) -> list[ModuleType]:
    """The command module named by the first word of ``argv`` that is a command, else every module."""
    chosen = next((a for a in argv if a in COMMANDS), None)
    names = [chosen] if chosen else list(COMMANDS)
    return [importlib.import_module(COMMANDS[n]) for n in names]


def all_modules() -> list[ModuleType]:
    """Every command module (for help and for tests)."""
    return [importlib.import_module(m) for m in COMMANDS.values()]
