"""LogReport -> logs.json: versioned, deterministic (fixed floats, ranked findings), no absolute paths."""

from __future__ import annotations

import json
from typing import Any

from analyzer.logs.model import LOG_REPORT_FORMAT_VERSION, LogReport
from analyzer.report.json_export import finding_dict, fixed, outcome_dict

FORMAT_NAME = "npu-triage-logs"


def logs_dict(r: LogReport) -> dict[str, Any]:
    """The report as a JSON-ready dict: findings first failure on top, the records around it, the summary."""
    return fixed(
        {
            "format": FORMAT_NAME,
            "format_version": LOG_REPORT_FORMAT_VERSION,
            "tool_version": r.tool_version,
            "run_id": r.run_id,
            "summary": r.summary,
            "findings": [finding_dict(i, f) for i, f in enumerate(r.findings, start=1)],
            "failure_context": {"columns": list(r.context_columns), "rows": [list(row) for row in r.context]},
            "rules": [outcome_dict(o) for o in r.outcomes],
            "problems": list(r.problems),
        }
    )


def render_logs_json(r: LogReport) -> str:
    return json.dumps(logs_dict(r), indent=2, sort_keys=False, ensure_ascii=False) + "\n"
