"""Judge a comparison: run the accuracy rules (scope 'dump') and gather what the reports show, from the tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from analyzer.accuracy.comparison import Comparison
from analyzer.accuracy.tables import insert_rows
from analyzer.ingest.model import Problem
from analyzer.rule_engine.model import ConfiguredRules, Finding, RuleOutcome
from analyzer.rule_engine.ranking import rank_findings
from analyzer.rule_engine.runner import plain_value, run_rules

SCOPE = "dump"
_OPERATORS = Path(__file__).with_name("operators.sql").read_text(encoding="utf-8")


@dataclass
class AccuracyReport:
    """Everything a report of one comparison shows; built from the tables, never from the files."""

    run_id: str
    dump: str
    reference: str
    findings: list[Finding]
    outcomes: list[RuleOutcome]
    problems: list[Problem]
    operators: list[dict] = field(default_factory=list)  # one per operator run, in execution order
    locations: list[dict] = field(default_factory=list)  # error_locations rows
    unpaired: list[dict] = field(default_factory=list)
    stats: list[dict] = field(default_factory=list)  # the statistics dump's rows (first STATS_ROWS)
    counts: dict = field(default_factory=dict)
    has_profile: bool = False
    profile: dict | None = None  # with --profile: {"path": the export, resolved; "run_ids": its runs}
    con: duckdb.DuckDBPyConnection | None = field(default=None, repr=False)  # the tables, for --catalog


def judge(comparison: Comparison, configured: ConfiguredRules, has_profile: bool = False) -> AccuracyReport:
    """Run the rules of scope 'dump' over the comparison's tables; rank the findings; read the report's rows."""
    configured = configured.where(lambda r: r.scope == SCOPE)
    findings, outcomes = run_rules(comparison.con, configured, [comparison.run_id])
    con, run_id = comparison.con, comparison.run_id
    findings = rank_findings(findings)
    insert_rows(con, "accuracy_findings", [_finding_row(run_id, n, f) for n, f in enumerate(findings, 1)])
    return AccuracyReport(
        run_id=run_id,
        dump=_label(comparison.dump),
        reference=_label(comparison.reference),
        findings=findings,
        outcomes=outcomes,
        problems=comparison.problems,
        operators=_rows(con, _OPERATORS, run_id),
        locations=_rows(con, _LOCATIONS, run_id),
        unpaired=_rows(con, "SELECT * EXCLUDE (run_id) FROM unpaired_tensors WHERE run_id = ? "
                       "ORDER BY exec_order NULLS LAST, op_name, side, slot, slot_index", run_id),
        counts=_rows(con, _COUNTS, run_id)[0],
        stats=_rows(con, _STATS, run_id),
        has_profile=has_profile,
        con=con,
    )  # fmt: skip


_LOCATIONS = "SELECT * FROM error_locations WHERE run_id = ? ORDER BY op_name, occurrence, slot_index"
STATS_ROWS = 500
_STATS = f"""
SELECT side, op_name, op_type, slot, slot_index, task_id, dtype, shape, element_count, max_value, min_value, avg_value,
       nan_count, neg_inf_count, pos_inf_count
FROM tensor_stats WHERE run_id = ? ORDER BY side, timestamp_us, task_id, op_name, slot, slot_index LIMIT {STATS_ROWS}
"""
_COUNTS = """
SELECT (SELECT count(*) FROM tensors WHERE run_id = $1 AND side = 'dump') AS dump_tensors,
       (SELECT count(*) FROM tensors WHERE run_id = $1 AND side = 'reference') AS reference_tensors,
       (SELECT count(*) FROM tensor_compare WHERE run_id = $1) AS compared,
       (SELECT count(*) FROM unpaired_tensors WHERE run_id = $1) AS unpaired,
       (SELECT count(*) FROM tensor_stats WHERE run_id = $1) AS stats_rows,
       (SELECT coalesce(sum(size_bytes), 0) FROM tensors WHERE run_id = $1) AS bytes_read
"""


def _label(path: Path) -> str:
    """A folder as the reports name it: its last two parts (no absolute path in a report's body).

    >>> _label(Path("/data/run1/dump/native")), _label(Path("/ref"))
    ('dump/native', 'ref')
    """
    return "/".join(Path(path).resolve().parts[-2:]) if len(Path(path).resolve().parts) > 2 else Path(path).name


def _finding_row(run_id: str, rank: int, f: Finding) -> dict:
    return {"run_id": run_id, "rank": rank, "code": f.code, "rule": f.rule, "severity": f.severity,
            "subject": f.subject, "value": f.value, "message": f.message}  # fmt: skip


def _rows(con: duckdb.DuckDBPyConnection, sql: str, run_id: str) -> list[dict]:
    cursor = con.execute(sql, [run_id])
    names = [d[0] for d in cursor.description]
    return [{n: plain_value(v) for n, v in zip(names, row, strict=True)} for row in cursor.fetchall()]
