"""A job finding whose input lost values says so: its confidence is low and its message names the problems.

A verdict is computed from the sound values only (value_checks.py drops the others), so it may well be
right; but a reader must know that the data it stands on was incomplete, and where.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from analyzer.ingest.model import Problem
from analyzer.rule_engine.model import Finding, Rule

# Which job tables each job file fills; a problem of no file of these (an absent rank) touches them all.
FILE_TABLES = {
    "step_trace_time.csv": ("job_steps",),
    "communication.json": ("job_comm_ops", "job_comm_bandwidth"),
    "communication_matrix.json": ("job_links",),
}
# rank_checks.py names the place of its problems: absent or empty ranks touch every table, the wait no
# present rank explains the collectives only.
PLACE_TABLES = {"collectives": ("job_comm_ops",)}
_ALL = ("job_steps", "job_comm_ops", "job_comm_bandwidth", "job_links")


def _tables(p: Problem) -> tuple[str, ...]:
    if (tables := FILE_TABLES.get(Path(p.file).name)) is not None:
        return tables
    if (tables := PLACE_TABLES.get(p.location)) is not None:
        return tables
    return _ALL if p.severity == "error" else ()


def mark_damaged(findings: list[Finding], problems: list[Problem], rules: tuple[Rule, ...]) -> list[Finding]:
    """Each finding of a rule that reads a table some problem touched: confidence 'low', and its message
    followed by how many problems touched its input and the first of them."""
    touched: dict[str, list[Problem]] = {}
    for p in problems:
        if p.severity in ("error", "warning"):
            for table in _tables(p):
                touched.setdefault(table, []).append(p)
    requires = {r.name: r.requires for r in rules}
    out = []
    for f in findings:
        hits = list({id(p): p for t in requires.get(f.rule, {}) for p in touched.get(t, ())}.values())
        if hits:
            first = f"{Path(hits[0].file).name}: {hits[0].problem}"
            note = f" [unreliable: {len(hits)} problem(s) in its input, the first: {first[:200]}; see the problems]"
            f = replace(f, confidence="low", message=f.message + note)
        out.append(f)
    return out
