"""Report test data built in DuckDB: a Diagnosis for any run, a run with hostile names, a generated big run."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.diagnosis_model import Diagnosis, RunSummary
from analyzer.ingest.database import append_rows
from analyzer.rule_engine.loader import load_rules
from analyzer.rule_engine.model import Finding, ReportSpec, RuleOutcome

RULES_DIR = Path(__file__).resolve().parents[1] / "rules"

HOSTILE_SCRIPT = "<script>alert(1)</script>"
HOSTILE_IMG = "<img src=x onerror=alert(1)>"
T0 = 1_700_000_000_000_000_000

# One finding per rule with a dedicated chart, so every finding chart kind gets rendered.
FINDING_RULES = (
    (
        "low-aicore-utilization",
        "SCH001",
        "critical",
        "scheduling",
        "AI Core busy below 30% of the run",
        "ratio",
    ),
    (
        "communication-not-overlapped",
        "COM001",
        "critical",
        "communication",
        "Communication not hidden",
        "ratio",
    ),
    (
        "mte-share-high",
        "MEM001",
        "warning",
        "memory",
        "Memory transfer (MTE) dominates AI Core time",
        "ratio",
    ),
    ("inter-op-gap", "SCH002", "warning", "scheduling", "Gaps between operators", "us"),
    (
        "call-count-hotspot",
        "CMP001",
        "info",
        "compute",
        "Cheap operators called very often",
        "count",
    ),
    ("hbm-bandwidth-saturated", "MEM002", "info", "memory", "HBM bandwidth saturated", "ratio"),
)


def run_row(con: duckdb.DuckDBPyConnection, run_id: str) -> dict:
    """The run's row of ``runs`` as a dict (empty when there is none)."""
    rel = con.sql("SELECT * FROM runs WHERE run_id = $r", params={"r": run_id})
    rows = rel.fetchall()
    return dict(zip(rel.columns, rows[0], strict=True)) if rows else {}


def finding(rule: tuple, run_id: str, rank: int, subject: str, evidence_cell: str = "op_0") -> Finding:
    name, code, severity, category, title, unit = rule
    return Finding(
        rule=name,
        code=code,
        severity=severity,
        category=category,
        title=title,
        run_id=run_id,
        subject=subject,
        value=0.52 if unit == "ratio" else 1234.0,
        threshold=0.4 if unit == "ratio" else 100.0,
        metric=name.replace("-", "_"),
        unit=unit,
        impact_us=10_000.0 / rank,
        span_share=0.05 / rank,
        confidence="high",
        message=f"{subject}: {title.lower()}",
        advice_summary="Do the obvious thing first.",
        advice_steps=("Look at the chart.", "Fix the largest contributor."),
        evidence_columns=("op_name", "dur_us", "share"),
        evidence=((evidence_cell, 12.5, 0.25), ("other", None, 0.1)),
    )


def diagnosis_for(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    subject: str = "MatMulV2",
    problems: tuple[dict, ...] = (),
) -> Diagnosis:
    """A Diagnosis of ``run_id`` with one finding per charted rule and a full completeness table."""
    findings = tuple(
        finding(rule, run_id, i, subject, evidence_cell=subject) for i, rule in enumerate(FINDING_RULES, 1)
    )
    outcomes = tuple(RuleOutcome(f.rule, f.code, run_id, "ran", 1) for f in findings) + (
        RuleOutcome(
            "aicpu-operators",
            "CMP002",
            run_id,
            "skipped",
            0,
            "needs ops.aic_mac_ratio",
            "aic-metrics PipeUtilization",
        ),
        RuleOutcome("frequency-drop", "HST001", run_id, "failed", 0, "Binder Error: no such column"),
    )
    return Diagnosis(
        run_id=run_id,
        run=run_row(con, run_id),
        summary=HOSTILE_SUMMARY,
        outcomes=outcomes,
        findings=findings,
        problems=problems,
        params={"inter-op-gap.threshold_us": 200.0},
        tool_version="0.1.0",
        rule_reports=builtin_rule_reports(),
    )


def builtin_rule_reports() -> dict[str, ReportSpec]:
    """The [report] table of every built-in rule, by rule name."""
    return {r.name: r.report for r in load_rules(RULES_DIR)}


# A run summary without its breakdown or memory (the tests that need a breakdown put one in).
HOSTILE_SUMMARY = RunSummary(
    span_us=136581.0,
    computing_us=8877.765,
    computing_ratio=0.065,
    computing_pct=6.5,
    span_basis="steps",
    span_source="step_trace_time",
    task_range_us=136581.0,
    step_computing_ratio_min=None,
    step_computing_ratio_median=None,
    step_computing_lowest_step=None,
    step_preparing_us=None,
    step_count=1,
    task_count=3,
    compute_task_count=3,
    breakdown=None,
    memory=None,
)


def add_hostile_run(con: duckdb.DuckDBPyConnection, run_id: str = "hostile") -> Diagnosis:
    """A small run whose op names and types, steps, counters and problems carry HTML/JS injections."""
    append_rows(
        con,
        "ops",
        "SELECT $r AS run_id, 0 AS device_id, i // 20 AS step_id, "
        "[$s, $img, 'MatMulV2', 'Add'][i % 4 + 1] AS op_name, [$s, $img, 'MatMulV2', 'Add'][i % 4 + 1] AS op_type, "
        "['AI_CORE', 'AI_VECTOR_CORE', 'MIX_AIC', 'AI_CPU'][i % 4 + 1] AS task_type, "
        "$t0 + i * 50000 + (i % 7) * 200000 AS start_ns, 10.0 + i % 13 AS dur_us, "
        "$t0 + i * 50000 + (i % 7) * 200000 + (10 + i % 13) * 1000 AS end_ns, "
        "9.0 AS core_time_us, 3.0 AS cube_time_us, 2.0 AS vector_time_us, 0.5 AS scalar_time_us, "
        "(i % 5) * 1.2 AS mte_time_us FROM range(60) t(i)",
        {"r": run_id, "s": HOSTILE_SCRIPT, "img": HOSTILE_IMG, "t0": T0},
    )
    con.execute(
        "INSERT INTO steps (run_id, step_id, computing_us, comm_not_overlapped_us, free_us) "
        "SELECT $r, i, 500 + i, 200, 100 FROM range(3) t(i)",
        {"r": run_id},
    )
    con.execute(
        "INSERT INTO counters (run_id, counter, instance, ts_ns, value, unit) SELECT $r, "
        "['hbm_read', 'hbm_write'][i % 2 + 1], $s, $t0 + i * 100000, 1000 + i * 10, 'MB/s' "
        "FROM range(80) t(i)",
        {"r": run_id, "s": HOSTILE_SCRIPT, "t0": T0},
    )
    con.execute(
        "INSERT INTO runs (run_id, source_path, producer, chip, task_count) VALUES ($r, $s, 'torch_npu', $img, 60)",
        {"r": run_id, "s": HOSTILE_SCRIPT, "img": HOSTILE_IMG},
    )
    problems = (
        {
            "file": HOSTILE_IMG,
            "location": "row 3",
            "severity": "warning",
            "problem": HOSTILE_SCRIPT,
            "hint": "rename it",
        },
    )
    return diagnosis_for(con, run_id, subject=HOSTILE_SCRIPT, problems=problems)


def add_big_run(con: duckdb.DuckDBPyConnection, task_count: int = 2_000_000, run_id: str = "big") -> Diagnosis:
    """A generated run of ``task_count`` device tasks (built with range(), no files, no Python loop)."""
    append_rows(
        con,
        "ops",
        "SELECT $r AS run_id, 0 AS device_id, i // 20000 AS step_id, "
        "'op_' || (i % 997) AS op_name, 'Type' || (i % 211) AS op_type, "
        "['AI_CORE', 'AI_VECTOR_CORE', 'MIX_AIC', 'MIX_AIV', 'AI_CPU'][i % 5 + 1] AS task_type, "
        "$t0 + i * 10000 + (i // 1000) * 300000 AS start_ns, 4.0 + i % 7 AS dur_us, "
        "$t0 + i * 10000 + (i // 1000) * 300000 + (4 + i % 7) * 1000 AS end_ns, (4.0 + i % 7) * 0.9 AS core_time_us, "
        "1.0 AS cube_time_us, 0.5 AS vector_time_us, 0.2 AS scalar_time_us, (i % 5) * 0.4 AS mte_time_us "
        "FROM range($n) t(i)",
        {"r": run_id, "t0": T0, "n": task_count},
    )
    con.execute(
        "INSERT INTO steps (run_id, step_id, computing_us, comm_not_overlapped_us, free_us) "
        "SELECT $r, i, 150000, 20000, 36000 FROM range($n // 20000) t(i)",
        {"r": run_id, "n": task_count},
    )
    con.execute(
        "INSERT INTO counters (run_id, counter, instance, ts_ns, value, unit) SELECT $r, "
        "['hbm_read', 'hbm_write'][i % 2 + 1], (i % 4)::VARCHAR, $t0 + i * 50000, 20000 + (i % 1000) * 30, "
        "'MB/s' FROM range(400000) t(i)",
        {"r": run_id, "t0": T0},
    )
    con.execute(
        "INSERT INTO runs (run_id, producer, task_count, start_ns, end_ns) SELECT $r, 'generated', count(*), "
        "min(start_ns), max(end_ns) FROM ops WHERE run_id = $r",
        {"r": run_id},
    )
    return diagnosis_for(con, run_id, subject="Type0")
