"""A job's Diagnosis -> diagnosis.md: its verdict, summary, ranks, ranked findings, rules and problems."""

from __future__ import annotations

from typing import Any

from analyzer.diagnosis_model import Diagnosis, job_summary
from analyzer.report.job_terminal import rank_holding
from analyzer.report.markdown import (
    GENERATED_BY,
    findings_section,
    md_table,
    md_text,
    problems_section,
    rules_section,
)


def _ms(us: float | None) -> str:
    return "" if us is None else f"{us / 1000:,.3f}"


def _verdict(d: Diagnosis) -> list[str]:
    """The top finding in one paragraph (what the job's page and terminal lead with)."""
    lines = ["## Verdict", ""]
    if not d.findings:
        return lines + ["No job-level findings."]
    f = d.findings[0]
    share = "" if f.span_share is None else f" ({f.span_share:.1%} of the job step)"
    lines += [f"**{md_text(f.title)}** ({f.code} {f.rule}, {f.severity}): {md_text(f.message)}", ""]
    lines += [f"Recoverable: {f.impact_us:.3f} us per step{share}. **What to do:** {md_text(f.advice_summary)}"]
    return lines + ([""] + [f"{len(d.findings) - 1} more finding(s) below."] if len(d.findings) > 1 else [])


def _summary(d: Diagnosis) -> list[str]:
    s, run = job_summary(d.summary), d.run
    waited = s.get("most_waited_for_rank")
    rows: list[list[Any]] = [
        ["ranks", f"{s.get('rank_count', 0)} (world size {run.get('world_size') or '?'})"],
        ["steps", s.get("step_count")],
        ["job step (ms, slowest rank)", _ms(s.get("job_step_us"))],
        ["slowest - fastest rank (ms)", _ms(s.get("step_spread_us"))],
        [
            "communication ops aligned across ranks",
            f"{s.get('aligned_op_multi_rank_count', 0)} of {s.get('aligned_op_count', 0)}",
        ],
        ["most waited for", "" if waited is None else f"rank {waited}"],
        ["wait it causes per step (ms)", _ms(s.get("caused_wait_per_step_us"))],
        ["parallel groups", run.get("groups", "")],
    ]
    return ["## Summary", ""] + md_table(["", ""], rows)


def _ranks(d: Diagnosis) -> list[str]:
    ranks = d.run.get("ranks") or []
    rows = [
        [r["rank"], "" if r.get("pp_stage") is None else r["pp_stage"], rank_holding(r), r.get("source_path")]
        for r in ranks
    ]
    return ["## Ranks", ""] + md_table(["rank", "pipeline stage", "holds", "export"], rows)


def render_job_markdown(d: Diagnosis) -> str:
    """The Markdown report of one job's diagnosis (analyzer.job.diagnosis.diagnose_job)."""
    lines = [GENERATED_BY, f"# Diagnosis of job {md_text(d.run_id)}", ""] + _verdict(d) + [""]
    lines += _summary(d) + [""] + _ranks(d) + [""] + findings_section(d) + rules_section(d) + problems_section(d)
    return "\n".join(lines) + "\n"
