"""Make findings' impacts exclusive, so that no stretch of device time is counted by two findings.

Each rule declares in its TOML which pool of time its impact claims (``[impact] family``):

- ``device-idle``: the time the device was not computing (the time breakdown's not_computing_us).
  Parts (communication not overlapped, long gaps, launch gaps) claim first, largest first; an
  ``umbrella`` finding of the family (``[impact] role``) keeps only what they leave.
- ``operator-time``: the device time of one operator type (``_op_type_busy``; a finding names the
  type in its ``op_type`` column, else its subject is the type). Several findings on one type share
  it, largest first; all of them together never exceed the run's computing time.
- ``job-wait`` (rules of scope job): the time a job's ranks wait for each other in collectives, per
  step: the most any rank waits (job_comm_ops). A late rank's caused wait (a ``part``) claims first;
  a group-wide wait finding (``umbrella``) keeps only what is left: one wait, one finding.
- ``none`` (also a rule that declares no family): no pool of its own.

Last, every finding of the run, in ranking order, is capped so that their impacts never add up to
more than the run's span (for a job: its step, the slowest rank's step time). A finding's severity is
its rule's condition, whatever others claimed of its impact: what is left of an impact depends on which
other findings a layout lets fire, and the same data must get the same severity in every layout. Only
a second finding on the same operator type (another aspect of the same cost) is told as ``info``: one
warning per cost, the largest claim keeps it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import duckdb

from analyzer.ingest.sql_values import IN_RUNS
from analyzer.rule_engine.model import Finding, Rule


def _claim_order(f: Finding) -> tuple:
    return (-round(f.impact_us, 3), f.code, f.subject)


class _Claims:
    """Pools of time per key, and what findings claimed of them so far."""

    def __init__(self, pools: dict[Any, float]) -> None:
        self.pools, self.used = pools, dict.fromkeys(pools, 0.0)

    def take(self, key: Any, wanted: float) -> float:
        if key not in self.pools:
            return wanted
        got = max(0.0, min(wanted, self.pools[key] - self.used[key]))
        self.used[key] += got
        return got


# Per run: (not computing, computing, span) keyed by run id, and device time keyed by (run, op type).
Pools = tuple[dict[str, float], dict[str, float], dict[str, float], dict[tuple[str, str], float]]


def impact_pools(con: duckdb.DuckDBPyConnection, run_ids: Iterable[str]) -> dict[str, Pools]:
    """The pools of time of each run of ``run_ids`` (that has them), read once for all of them."""
    runs = sorted(set(run_ids))
    pools: dict[str, Pools] = {}
    for run_id, n, c, s in con.execute(
        "SELECT run_id, not_computing_us, computing_us, span_us FROM _time_breakdown "
        f"WHERE window_no = 0 AND {IN_RUNS}",
        {"runs": runs},
    ).fetchall():
        pools[run_id] = ({run_id: n or 0.0}, {run_id: c or 0.0}, {run_id: s or 0.0}, {})
    for r, t, b in con.execute(
        "SELECT run_id, op_type, sum(busy_us) FROM _op_type_busy WHERE op_type IS NOT NULL "
        f"AND {IN_RUNS} GROUP BY run_id, op_type",
        {"runs": runs},
    ).fetchall():
        pools.setdefault(r, ({}, {}, {}, {}))[3][r, t] = b
    return pools


def _pools(pools: dict[str, Pools], run_ids: set[str]) -> Pools:
    """(not computing, computing, span) per run and device time per (run, op type) of ``run_ids``."""
    merged: Pools = ({}, {}, {}, {})
    for run_id in sorted(run_ids):
        for into, part in zip(merged, pools.get(run_id, ({}, {}, {}, {})), strict=True):
            into.update(part)  # type: ignore[attr-defined]
    return merged


def _capped(f: Finding, impact: float, span: float | None, note: dict[str, Any], same_cost: str = "") -> Finding:
    if impact >= f.impact_us - 1e-9 and not (same_cost and f.severity != "info"):
        return f
    details = {**f.details, **note}
    if impact < f.impact_us - 1e-9:
        details["impact_before_overlap_us"] = f.impact_us
    severity = f.severity
    if severity != "info" and same_cost:
        details["severity_before_overlap"], severity = severity, "info"
    if same_cost:
        details["same_cost_as"] = same_cost
    share = impact / span if span else f.span_share
    return replace(f, impact_us=impact, span_share=share, severity=severity, details=details)


def _claim_sequence(findings: list[Finding], rules: list[Rule]) -> list[tuple[Finding, tuple]]:
    """The findings with their rule's (family, role), in the order they claim: parts before umbrellas,
    each largest first."""
    declared = {r.name: (r.impact_family or "none", r.impact_role) for r in rules}
    family = [(f, declared.get(f.rule, ("none", "part"))) for f in findings]
    return sorted(family, key=lambda fr: (fr[1][1] == "umbrella", *_claim_order(fr[0])))


def _pool_claim(claims: _Claims, f: Finding, role: str) -> tuple[float, dict[str, Any]]:
    """What ``f`` gets of its run's pool in ``claims``; an umbrella notes what other findings claimed first."""
    got = claims.take(f.run_id, f.impact_us)
    return got, {"claimed_by_other_findings_us": f.impact_us - got} if role == "umbrella" else {}


def _cap_to_span(out: dict[int, Finding], span: dict[str, float]) -> None:
    """Caps ``out``'s findings in place, in ranking order, so that the impacts of one run (or job) never
    add up to more than its ``span``."""
    within = _Claims(dict(span))
    for key, f in sorted(out.items(), key=lambda kv: _claim_order(kv[1])):
        out[key] = _capped(f, within.take(f.run_id, f.impact_us), span.get(f.run_id), {})


def exclusive_impacts(
    con: duckdb.DuckDBPyConnection, findings: list[Finding], rules: list[Rule], pools: dict[str, Pools] | None = None
) -> list[Finding]:
    """The findings with impacts that count each stretch of device time once (needs the helper views).

    ``rules``: the rules that made the findings (their ``[impact]`` declarations); ``pools``: ``impact_pools``
    of (at least) the findings' runs, read before for many runs' findings (None: read here).
    """
    runs = {f.run_id for f in findings}
    if not runs:
        return findings
    idle, computing, span, busy = _pools(impact_pools(con, runs) if pools is None else pools, runs)
    idle_claims, type_claims, compute_claims = _Claims(idle), _Claims(busy), _Claims(computing)
    out: dict[int, Finding] = {}
    first_on_type: dict[tuple[str, str], str] = {}
    for f, (fam, role) in _claim_sequence(findings, rules):
        if fam == "device-idle":
            got, note = _pool_claim(idle_claims, f, role)
        elif fam == "operator-time":
            op_type = f.details.get("op_type") or f.subject
            got = compute_claims.take(f.run_id, type_claims.take((f.run_id, op_type), f.impact_us))
            note = {}
            if f.severity != "info" and (f.run_id, op_type) in first_on_type:
                out[id(f)] = _capped(f, got, span.get(f.run_id), note, first_on_type[(f.run_id, op_type)])
                continue
            if f.severity != "info":
                first_on_type[(f.run_id, op_type)] = f"{f.code} {f.rule}"
        else:
            got, note = f.impact_us, {}
        out[id(f)] = _capped(f, got, span.get(f.run_id), note)
    _cap_to_span(out, span)
    return [out[id(f)] for f in findings]


# Per job: the collective wait per step of the rank that waits most (sums over each rank's ops in a fixed
# order), and the job step (per step the slowest rank's stage time, averaged over steps).
_JOB_POOLS = f"""
WITH w AS (SELECT run_id, rank, sum(wait_us ORDER BY wait_us) / count(DISTINCT step_id) AS wait_us
           FROM job_comm_ops
           WHERE {IN_RUNS} AND op_kind = 'collective' AND op_rank_count >= 2
             AND wait_us IS NOT NULL
           GROUP BY run_id, rank),
s AS (SELECT run_id, step_id, max(stage_us) AS step_us FROM job_steps
      WHERE {IN_RUNS} GROUP BY run_id, step_id)
SELECT j.run_id, coalesce((SELECT max(w.wait_us) FROM w WHERE w.run_id = j.run_id), 0) AS wait_us,
       avg(j.step_us ORDER BY j.step_us) AS step_us
FROM s j GROUP BY j.run_id ORDER BY j.run_id
"""


def exclusive_job_impacts(con: duckdb.DuckDBPyConnection, findings: list[Finding], rules: list[Rule]) -> list[Finding]:
    """The job findings with impacts that count each wait once and add up to at most the job step
    (needs the job tables; ``run_id`` of a finding is its job's id)."""
    runs = sorted({f.run_id for f in findings})
    if not runs:
        return findings
    wait, step = {}, {}
    for run_id, w, s in con.execute(_JOB_POOLS, {"runs": runs}).fetchall():
        wait[run_id], step[run_id] = w or 0.0, s or 0.0
    wait_claims = _Claims(wait)
    out: dict[int, Finding] = {}
    for f, (fam, role) in _claim_sequence(findings, rules):
        if fam == "job-wait":
            got, note = _pool_claim(wait_claims, f, role)
        else:
            got, note = f.impact_us, {}
        out[id(f)] = _capped(f, got, step.get(f.run_id), note)
    _cap_to_span(out, step)
    return [out[id(f)] for f in findings]
