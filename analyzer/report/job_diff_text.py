"""A JobDiff -> terminal lines and a JSON-ready dict (fixed number formats)."""

from __future__ import annotations

from typing import Any

from analyzer.job.job_diff import JobDiff


def _ms(us: float | None) -> str:
    return "—" if us is None else f"{us / 1000:,.2f} ms"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:+.1f}%"


def job_diff_lines(diff: JobDiff) -> list[str]:
    """The job step time, then the ranks and links that changed most."""
    lines = [
        f"job step: {_ms(diff.base.job_step_us)} ({diff.base.label}) -> {_ms(diff.new.job_step_us)} "
        f"({diff.new.label}), {_pct(diff.step_delta_pct)}",
        *[f"note: {n}" for n in diff.notes],
        "ranks that changed most (computing and communication wait per step):",
    ]
    for r in diff.ranks:
        lines.append(
            f"  rank {r['rank']}: step {_ms(r['base_stage_us'])} -> {_ms(r['new_stage_us'])} ({_pct(r['delta_pct'])}); "
            f"computing {_ms(r['base_computing_us'])} -> {_ms(r['new_computing_us'])}; "
            f"wait {_ms(r['base_wait_us'])} -> {_ms(r['new_wait_us'])}"
        )
    lines.append(
        "links whose bandwidth changed most:" if diff.links else "links: no communication matrix on either side"
    )
    for ln in diff.links:
        base = "—" if ln["base_gb_per_s"] is None else f"{ln['base_gb_per_s']:.2f}"
        new = "—" if ln["new_gb_per_s"] is None else f"{ln['new_gb_per_s']:.2f}"
        lines.append(
            f"  rank {ln['rank_a']} <-> rank {ln['rank_b']} ({ln['transport']}): {base} -> {new} GB/s "
            f"({_pct(ln['delta_pct'])})"
        )
    return lines


def job_diff_dict(diff: JobDiff) -> dict[str, Any]:
    return {
        "scope": "job",
        "base": {"label": diff.base.label, "rank_count": diff.base.rank_count, "job_step_us": diff.base.job_step_us},
        "new": {"label": diff.new.label, "rank_count": diff.new.rank_count, "job_step_us": diff.new.job_step_us},
        "job_step_delta_pct": diff.step_delta_pct,
        "ranks": diff.ranks,
        "links": diff.links,
        "notes": diff.notes,
    }
