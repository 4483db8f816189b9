"""The "About this run" part of a page, below the findings: the run, its collection settings and its summary
in words (no empty rows, no raw keys), the rule completeness table and the rule parameters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analyzer.diagnosis_model import (
    PREPARING_LABEL,
    PREPARING_NOTE,
    Diagnosis,
    JobSummary,
    RunsSummary,
    RunSummary,
    field_values,
)
from analyzer.report.html_sections import card, esc, kv_table
from analyzer.rule_engine.model import RuleOutcome

_RUN_FIELDS = (
    ("run_id", "run"),
    ("source_path", "export folder"),
    ("producer", "producer"),
    ("export_type", "export type"),
    ("layout", "layout"),
    ("device_id", "device"),
    ("rank_id", "rank"),
    ("chip", "chip"),
    ("ai_core_count", "AI Cores"),
    ("cann_version", "CANN"),
    ("torch_npu_version", "torch_npu"),
    ("model_name", "model"),
    ("batch_size", "batch size"),
    ("task_count", "device tasks"),
)
_COLLECTION_FIELDS = (
    ("profiler_level", "profiler level"),
    ("aic_metrics", "AI Core metrics"),
    ("aic_mode", "AI Core mode"),
    ("pmu_collected", "PMU pipeline metrics"),
)
# Summary keys said elsewhere on the page (run card, breakdown bar, memory section) or by another key.
_SAID_ELSEWHERE = frozenset(
    {"breakdown", "memory", "computing_pct", "task_count", "task_range_us", "span_basis", "span_source"}
)
_STATUS_ORDER = {"failed": 0, "skipped": 1, "ran": 2}
# The run card's time range: the runs table's first device task start to last device task end. Not
# the summary's span_us, which is the steps' window when the run has steps (span_source).
DEVICE_TASK_RANGE_LABEL = "task range (ms)"


def _task_range_ms(run: dict[str, Any]) -> float | None:
    start, end = run.get("start_ns"), run.get("end_ns")
    return (end - start) / 1e6 if isinstance(start, int) and isinstance(end, int) else None


def _present(pairs: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The pairs with a value: a card shows what is known, not a row of dashes per unknown."""
    return [(k, v) for k, v in pairs if v is not None and v != "" and v != []]


def _ms(us: Any) -> str | None:
    return f"{us / 1000:,.3f} ms" if isinstance(us, int | float) else None


def _pct(ratio: Any) -> str | None:
    return f"{ratio * 100:.1f}%" if isinstance(ratio, int | float) else None


def _steps_computing(s: dict[str, Any]) -> str | None:
    median, low, step = (s.get(k) for k in ("step_computing_ratio_median", "step_computing_ratio_min",
                                            "step_computing_lowest_step"))  # fmt: skip
    if median is None:
        return None
    lowest = f", lowest {_pct(low)}" + (f" (step {step})" if step is not None else "") if low is not None else ""
    return f"median {_pct(median)}{lowest}"


def _preparing(s: dict[str, Any]) -> str | None:
    """The host's time before each step's first task, in ms with what it is; None when not given."""
    ms = _ms(s.get("step_preparing_us"))
    return None if ms is None else f"{ms} {PREPARING_NOTE}"


def _span(s: dict[str, Any]) -> str | None:
    """The span in ms with what it is the span of (steps, tasks) and where that came from."""
    how = ", ".join(str(s[k]) for k in ("span_basis", "span_source") if s.get(k))
    return None if _ms(s.get("span_us")) is None else f"{_ms(s.get('span_us'))}" + (f" ({how})" if how else "")


def summary_pairs(summary: dict[str, Any]) -> list[tuple[str, Any]]:
    """The run summary as labelled values in words; keys without a label here keep a readable form of theirs."""
    s = summary
    worded = {
        "span_us": ("time span", _span(s)),
        "computing_us": ("computing time", _ms(s.get("computing_us"))),
        "computing_ratio": ("computing share of the span", _pct(s.get("computing_ratio"))),
        "compute_task_count": ("compute tasks", s.get("compute_task_count")),
        "step_count": ("steps", s.get("step_count")),
        "step_computing_ratio_median": ("computing share per step", _steps_computing(s)),
        "step_preparing_us": (PREPARING_LABEL, _preparing(s)),
        "run_count": ("runs", s.get("run_count")),
    }
    pairs = []
    for key in sorted(s):
        if key in _SAID_ELSEWHERE or (key.startswith("step_computing_") and key not in worded):
            continue
        pairs.append(worded.get(key, (key.replace("_", " "), s[key])))
    return _present(pairs)


def _worded_fields(summary: RunSummary | RunsSummary | JobSummary) -> dict[str, Any]:
    """The summary's values for summary_pairs, read without dataclasses.asdict's deep copy: its
    nested values (the breakdown, the memory) are said elsewhere, never worded from this dict."""
    if isinstance(summary, dict):
        return summary
    return field_values(summary)


def _completeness(outcomes: Sequence[RuleOutcome]) -> str:
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in ("ran", "skipped", "failed")}
    ordered = sorted(outcomes, key=lambda o: (_STATUS_ORDER.get(o.status, 3), o.code, o.rule))
    rows = "".join(
        f'<tr><td>{esc(o.code)}</td><td>{esc(o.rule)}</td><td><span class="badge {esc(o.status)}">{esc(o.status)}'
        f'</span></td><td class="num">{o.finding_count}</td><td>{esc(o.reason)}</td><td>{esc(o.enable_hint)}</td></tr>'
        for o in ordered
    )
    body = (
        f'<table><thead><tr><th>code</th><th>rule</th><th>status</th><th class="num">findings</th>'
        f"<th>reason</th><th>how to enable</th></tr></thead><tbody>{rows}</tbody></table>"
        if outcomes
        else '<p class="none">No rules were run.</p>'
    )
    summary = f"Rules: {counts['ran']} ran, {counts['skipped']} skipped, {counts['failed']} failed"
    opened = " open" if counts["failed"] else ""
    return f'<details id="completeness"{opened}><summary>{summary}</summary>{body}</details>'


def _params(diagnosis: Diagnosis) -> str:
    params = sorted(diagnosis.params.items())
    if not params:
        return ""
    return f"<details><summary>Rule parameters</summary>{kv_table(params)}</details>"


def about_section(diagnosis: Diagnosis, title: str, cards: Sequence[str], extra: str = "") -> str:
    """The page's metadata, below its findings: the ``cards``, the rule completeness table, ``extra`` (HTML)
    and the rule parameters."""
    return (
        f'<section id="about"><h2>{esc(title)}</h2><div class="cards">{"".join(cards)}</div>'
        f"{_completeness(diagnosis.outcomes)}{extra}{_params(diagnosis)}</section>"
    )


def run_about_section(diagnosis: Diagnosis) -> str:
    """The run, its collection settings and its summary, in words; what was not collected and how to collect it."""
    run = diagnosis.run
    run_pairs = [(label, run.get(key, diagnosis.run_id if key == "run_id" else None)) for key, label in _RUN_FIELDS]
    run_pairs.append((DEVICE_TASK_RANGE_LABEL, _task_range_ms(run)))
    not_collected = run.get("not_collected") or []
    collection = [(label, run.get(key)) for key, label in _COLLECTION_FIELDS]
    collection.append(("not collected", [str(n).split(":", 1)[0] for n in not_collected] or None))
    cards = [card("Run", kv_table(_present(run_pairs)))]
    if _present(collection):
        cards.append(card("Collection", kv_table(_present(collection))))
    if summary := summary_pairs(_worded_fields(diagnosis.summary)):
        cards.append(card("Summary", kv_table(summary)))
    missing = "".join(f"<li>{esc(n)}</li>" for n in not_collected)
    extra = (
        f"<details><summary>Not collected, and the settings that collect it</summary><ul>{missing}</ul></details>"
        if missing
        else ""
    )
    return about_section(diagnosis, "About this run", cards, extra)


def runs_about_section(diagnosis: Diagnosis) -> str:
    """The all-runs page's metadata: the runs compared, the rules comparing them (completeness, params)."""
    runs = "".join(f"<li>{esc(r)}</li>" for r in diagnosis.run.get("runs") or [])
    return about_section(diagnosis, "The runs compared", [card("Runs compared", f"<ul>{runs}</ul>")])
