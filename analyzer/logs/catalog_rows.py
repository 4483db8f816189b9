"""A batch run's logs: the log trees beside its export, read into its connection; their findings as catalog rows."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import duckdb

from analyzer.logs.beside import found_logs
from analyzer.logs.profile_join import AttachedLogs, judge_attached, read_attached
from analyzer.rule_engine.model import ConfiguredRules


def read_logs_beside(con: duckdb.DuckDBPyConnection, export: Path, run_ids: list[str]) -> list[AttachedLogs]:
    """The log collections found inside or beside ``export`` (logs/beside.py), read into ``con`` for its runs
    ``run_ids`` (their host activities on the timelines, their failed tasks linked), before any rule runs."""
    return [read_attached(con, f.logdir, run_ids, None, f.run_id, f.loose) for f in found_logs([export])]


def log_finding_rows(
    con: duckdb.DuckDBPyConnection, attached: list[AttachedLogs], export: Path, configured: ConfiguredRules
) -> list[dict[str, Any]]:
    """The rows of the catalog table log_findings (without run_id) of every log folder read, its findings in
    the logs' rank order."""
    rows = []
    for logs in attached:
        report = judge_attached(con, logs, configured)
        where = os.path.relpath(logs.loaded_root, Path(export).resolve())
        rows += [
            {
                "logs": Path(where).as_posix(),
                "rank": rank,
                "code": f.code,
                "rule": f.rule,
                "severity": f.severity,
                "title": f.title,
                "subject": f.subject,
                "value": f.value,
                "metric": f.metric,
                "unit": f.unit,
                "message": f.message,
                "details": json.dumps(f.details, sort_keys=True, default=str),
            }
            for rank, f in enumerate(report.findings, start=1)
        ]
    return rows
