"""A job's Diagnosis -> the terminal: the job line, its ranks by what they hold, ranked findings; its ranks' findings
one line per rule."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from rich.console import Console

from analyzer.diagnosis_model import Diagnosis, job_summary
from analyzer.report.terminal import findings_table, overview_notes
from analyzer.rule_engine.model import SEVERITY_RANK, ExplainedBy
from analyzer.vocabulary import SEVERITIES


def rank_ranges(ranks: list[int]) -> str:
    """Ranks as compact ranges.

    >>> rank_ranges([0, 1, 2, 5, 7, 8])
    '0-2, 5, 7-8'
    """
    parts: list[str] = []
    for r in sorted(ranks):
        if parts and r == int(parts[-1].split("-")[-1]) + 1:
            parts[-1] = f"{parts[-1].split('-')[0]}-{r}"
        else:
            parts.append(str(r))
    return ", ".join(parts)


# What a rank's export holds, by (per-task data, step trace or communication summaries), in print order.
_HOLDINGS = {
    (True, True): "per-task data and summaries",
    (True, False): "per-task data, no summaries",
    (False, True): "summaries only",
    (False, False): "neither (metadata only)",
}


def rank_holding(rank: dict) -> str:
    """What one rank's export holds (a row of the job's run['ranks']), in the words of the job verdict."""
    return _HOLDINGS[(bool(rank["has_kernels"]), bool(rank["has_step_trace"] or rank["has_communication"]))]


def _holdings(ranks: list[dict]) -> list[str]:
    """One phrase per kind of export among the ranks: which ranks hold per-task data, which only summaries."""
    out = []
    for label in _HOLDINGS.values():
        hit = [r["rank"] for r in ranks if rank_holding(r) == label]
        if hit:
            out.append(f"{label}: rank {rank_ranges(hit)}")
    return out


def print_job_diagnosis(d: Diagnosis, console: Console, limit: int = 15, messages: int = 5) -> None:
    """Print the job verdict: what the job holds, its ranked findings, rules that did not run."""
    s, ranks = job_summary(d.summary), d.run.get("ranks") or []
    step = "?" if s.get("job_step_us") is None else f"{s['job_step_us'] / 1000:,.1f} ms"
    spread = (
        "" if s.get("step_spread_us") is None else f" (slowest - fastest rank {s['step_spread_us'] / 1000:,.1f} ms)"
    )
    console.print(
        f"job {d.run_id}: {s.get('rank_count', 0)} ranks (world size {d.run.get('world_size') or '?'}), "
        f"{s.get('step_count', 0)} step(s), job step {step}{spread}; "
        f"{s.get('aligned_op_multi_rank_count', 0)} of {s.get('aligned_op_count', 0)} communication ops aligned "
        "across ranks",
        markup=False,
    )
    for line in _holdings(ranks):
        console.print(f"  {line}", markup=False)
    console.print(f"  groups: {d.run.get('groups', '')}", markup=False)
    if s.get("most_waited_for_rank") is not None and s.get("job_step_us"):
        wait = s["caused_wait_per_step_us"] or 0.0
        console.print(
            f"  most waited for: rank {s['most_waited_for_rank']} (the others wait {wait / 1000:,.2f} ms per step "
            f"for it at the collectives, {wait / s['job_step_us']:.1%} of the job step)",
            markup=False,
        )
    if d.findings:
        console.print(findings_table(d, limit))
        for i, f in enumerate(d.findings[:messages], 1):
            console.print(f"{i}. [{f.code}] {f.message}", markup=False)
            console.print(f"   what to do: {f.advice_summary}", markup=False)
    else:
        console.print("no job-level findings", markup=False)
    for o in d.outcomes:
        if o.status != "ran":
            console.print(f"{o.status}: {o.code} {o.rule}: {o.reason}", markup=False)


def _span(values: list[float]) -> str:
    """Values as 'low-high' (one value when they are all alike), as the notes print them."""
    low, high = f"{min(values):.1f}", f"{max(values):.1f}"
    return low if low == high else f"{low}-{high}"


def _explained_note(bys: list[ExplainedBy]) -> str:
    """How one job finding explains a rule's findings on ``bys``' ranks: the note, and the amounts (their range
    over the ranks) when it gave them."""
    by, n = bys[0], len(bys)
    head = f"{n} {'partly ' if by.partial else ''}explained by {by.code}: {by.note}"
    if by.explained_ms is None:
        return head
    waited, of, own = (_span([getattr(b, k) or 0.0 for b in bys]) for k in ("explained_ms", "amount_ms", "own_ms"))
    return f"{head} ({waited} of {of} ms {by.per} of {by.waits}; {own} ms their own)"


def rank_finding_lines(job: Diagnosis, ranks: Sequence[Diagnosis]) -> list[str]:
    """The findings of the job's ranks (their own diagnoses), one line per rule: how many ranks it touches and
    how many of them a job finding explains (wholly, or in part: with the range of the amounts); the per-rank
    detail is in the ranks' reports."""
    touched: dict[tuple[str, str], Counter] = defaultdict(Counter)  # (code, rule) -> severity -> ranks
    explained: dict[tuple[str, str], dict[tuple, list[ExplainedBy]]] = defaultdict(lambda: defaultdict(list))
    for d in ranks:
        worst: dict[tuple[str, str], str] = {}  # per rule its worst severity on this rank (counted once)
        for f in d.findings:
            if SEVERITY_RANK[f.severity] >= SEVERITY_RANK[worst.get((f.code, f.rule), "info")]:
                worst[(f.code, f.rule)] = f.severity
            if (e := f.explained_by) is not None:
                explained[(f.code, f.rule)][(e.partial, e.code, e.note, e.per, e.waits)].append(e)
        for key, severity in worst.items():
            touched[key][severity] += 1
    lines = [f"the {len(ranks)} rank(s) of job {job.run_id} judged on their own (details in their reports):"]
    for (code, rule), by in sorted(touched.items()):
        counts = ", ".join(f"{by[s]} {s}" for s in reversed(SEVERITIES) if by[s])
        notes = explained[(code, rule)]
        why = "".join(f"; {_explained_note(notes[k])}" for k in sorted(notes))
        lines.append(f"  {code} {rule}: {sum(by.values())} rank(s): {counts}{why}")
    return [*lines, *([] if touched else ["  no findings"]), *overview_notes(ranks)]
