"""An accuracy report as Markdown (accuracy.md)."""

from __future__ import annotations

from analyzer.accuracy.judge import AccuracyReport
from analyzer.accuracy.report.cells import STATS_COLUMNS, operator_table, stats_cells


def _table(head: tuple[str, ...] | list[str], rows: list[list[str]]) -> list[str]:
    def line(cells):
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return [line(head), "|" + "---|" * len(head), *(line(r) for r in rows)]


def render_markdown(report: AccuracyReport) -> str:
    """The report's text: summary, findings with advice, operators in execution order, unpaired, problems."""
    c = report.counts
    out = [
        f"# Accuracy: {report.dump} against {report.reference}",
        "",
        f"{c['compared']} tensor pair(s) compared, {c['unpaired']} unpaired; "
        f"{c['dump_tensors']} dump and {c['reference_tensors']} reference tensor(s); "
        f"{len(report.findings)} finding(s).",
        "",
        "## Findings",
        "",
    ]
    for n, f in enumerate(report.findings, 1):
        out += [f"{n}. **[{f.code}] {f.severity}** {f.message}", f"   - what to do: {f.advice_summary}"]
    out += ["No finding."] if not report.findings else []
    out += _operators(report) + _stats(report) + _unpaired(report) + _problems(report)
    return "\n".join(out) + "\n"


def _operators(report: AccuracyReport) -> list[str]:
    head, rows = operator_table(report)
    return ["", "## Operators in execution order", "", *_table(head, rows)]


def _stats(report: AccuracyReport) -> list[str]:
    if not report.stats:
        return []
    rows = [stats_cells(r) for r in report.stats]
    return ["", f"## Statistics dump (first {len(rows)} rows)", "", *_table(STATS_COLUMNS, rows)]


def _unpaired(report: AccuracyReport) -> list[str]:
    if not report.unpaired:
        return []
    rows = [
        [u["side"], u["op_name"], f"{u['slot']} {u['slot_index']}", u["reason"], u["source_file"]]
        for u in report.unpaired
    ]
    return ["", "## Unpaired tensors", "", *_table(("side", "operator", "tensor", "reason", "file"), rows)]


def _problems(report: AccuracyReport) -> list[str]:
    if not report.problems:
        return []
    return ["", "## Problems", "", *(f"- {p.line()}" for p in report.problems)]
