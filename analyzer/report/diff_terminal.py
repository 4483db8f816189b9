"""A run diff for the terminal: rich renderables (header lines, the op-type table, op changes, findings),
or for a pipe: the op types as TSV and the lines about the whole run apart."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from analyzer.diff.model import CHANGED, RunDiff, type_counts_text
from analyzer.report.diff_markdown import ci_text, pct, step_line
from analyzer.report.rows import tsv_line

TSV_COLUMNS = ("op_type", "status", "base_ms_per_step", "new_ms_per_step", "change", "confidence", "evidence")


def diff_renderable(diff: RunDiff, fail_pct: float | None = None) -> Group:
    """Everything a terminal shows of a diff."""
    lines: list = [Text(f"{diff.base_label} -> {diff.new_label}", style="bold"), Text(step_line(diff))]
    lines += [Text(f"note: {n}", style="dim") for n in diff.notes]
    changed = [t for t in diff.types if t.status in CHANGED]
    title = "op types beyond noise, added, removed or renamed (median per-step totals)"
    lines.append(_types_table(title, changed) if changed else Text(f"{title}: none"))
    lines.append(Text(type_counts_text(diff.types)))
    unknown = [t for t in diff.types if t.status == "no noise estimate"]
    if unknown:
        lines.append(_types_table("op types with no noise estimate (under 3 steps per side: not judged)", unknown))
    lines += [Text(f"{c.op_type} {c.change} x {c.count} per step ({c.total_us:.1f} us)") for c in diff.op_changes]
    lines += [
        Text(f"{r.base_type} renamed to {r.new_type} ({r.positions} positions, confidence {r.confidence:.0%})")
        for r in diff.renames
    ]
    for pipe, s in diff.pipe_shares.items():
        if s.significant:
            lines.append(
                Text(
                    f"{pipe} share of core time {s.base_median:.1%} -> {s.new_median:.1%} "
                    f"({(s.new_median - s.base_median) * 100:+.1f} pp)"
                )
            )
    lines += [Text(f"new finding: {f['code']} {f['title']} ({f['subject']})") for f in diff.findings_new]
    lines += [Text(f"resolved finding: {f['code']} {f['title']} ({f['subject']})") for f in diff.findings_resolved]
    if fail_pct is not None:
        found = diff.regressions(fail_pct)
        lines.append(
            Text(
                f"regressions beyond {fail_pct:g}%: {', '.join(found) if found else 'none'}",
                style="bold red" if found else "bold green",
            )
        )
    return Group(*lines)


def _types_table(title: str, types) -> Table:
    table = Table(title=title)
    for name in ("op type", "status", "base ms", "new ms", "change", "confidence", "evidence"):
        table.add_column(name, overflow="ellipsis")  # words wrap whole; one too long is cut
    for t in types:
        style = "red" if t.status in ("slower", "added") else "green" if t.status in ("faster", "removed") else ""
        table.add_row(
            t.op_type,
            Text(t.status, style=style),
            f"{t.shift.base_median / 1000:.4f}",
            f"{t.shift.new_median / 1000:.4f}",
            pct(t.shift.rel_change),
            t.shift.confidence,
            ci_text(t.shift),
        )
    return table


def diff_tsv(diff: RunDiff) -> str:
    """Every op type of the diff (those within noise too) as TSV, largest change first."""
    lines = [tsv_line(list(TSV_COLUMNS))]
    for t in diff.types:
        s = t.shift
        row = [t.op_type, t.status, f"{s.base_median / 1000:.4f}", f"{s.new_median / 1000:.4f}"]
        lines.append(tsv_line([*row, pct(s.rel_change), s.confidence, ci_text(s)]))
    return "".join(lines)


def diff_summary_lines(diff: RunDiff, fail_pct: float | None = None) -> list[str]:
    """The lines about the whole run: runs compared, step time, notes, regressions."""
    lines = [f"{diff.base_label} -> {diff.new_label}", step_line(diff)]
    lines += [f"note: {n}" for n in diff.notes]
    if fail_pct is not None:
        found = diff.regressions(fail_pct)
        lines.append(f"regressions beyond {fail_pct:g}%: {', '.join(found) if found else 'none'}")
    return lines
