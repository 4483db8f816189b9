"""The results JSON -> a rich table for the terminal, and the Markdown section of the README."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from analyzer.atomic_files import write_text_atomically
from bench.results import MSPROF, MSPROF_BUDGET_S

START, END = "<!-- bench:start -->", "<!-- bench:end -->"
HEADERS = (
    "input",
    "largest file MB",
    "tool",
    "wall s",
    "peak RSS MB",
    "ratio to msprof-analyze",
    "ratio to parse floor",
)


def _cells(row: dict[str, Any]) -> tuple[str, ...]:
    msprof = row["ratio_to_msprof_analyze"]
    floor = row["ratio_to_parse_floor"]
    return (
        row["input"],
        f"{row['largest_file_mb']:.1f}",
        row["tool"] + ("" if row["exit_code"] == 0 else f" (exit {row['exit_code']})"),
        f"{row['wall_s']:.2f}",
        f"{row['peak_rss_mb']:.0f}",
        "-"
        if msprof is None
        else f"{msprof:.3f} ({row['times_faster_than_msprof_analyze']:.1f}x faster)"
        if msprof < 1
        else f"{msprof:.2f}",
        "-" if floor is None else f"{floor:.2f}",
    )


def print_results(doc: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console(width=170)
    table = Table(title="npu-triage benchmark" + (" (tiny inputs)" if doc["tiny"] else ""))
    for h in HEADERS:
        table.add_column(h, justify="left" if h in ("input", "tool") else "right", overflow="fold")
    for row in doc["rows"]:
        table.add_row(*_cells(row))
    console.print(table)
    for s in doc["scaling"]:
        console.print(
            f"scaling {s['layout']} 1x -> 5x ({s['tasks_1x']:,} -> {s['tasks_5x']:,} tasks), "
            f"{s['tool']}: time x{s['time_ratio']}, peak RSS x{s['rss_ratio']}",
            markup=False,
        )
    for t in doc["targets"]:
        console.print(
            f"{'MET ' if t['met'] else 'MISS'} {t['subject']}: {t['target']}: {t['value']} "
            f"(limit {t['limit']}{_floor_text(t)})",
            markup=False,
        )


_INTRO = (
    "On a fresh machine, after the set-up of [Start here](#start-here) (its `.venv` active), one "
    "command from the root of the clone (it generates the inputs under `reports/bench/data/`, "
    "installs msprof-analyze into `reports/bench/msprof-venv/` and writes "
    "`reports/bench/results.json`):"
)


def _machine_line(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    return (
        f"Measured {m['date']} on {m['nproc']} cores, {m['memory_gb']} GB memory, {m['cpu']}, "
        f"Python {m['python']}; sizes {', '.join(doc.get('sizes', []))}: the whole run took "
        f"{doc['total_run_s'] / 60:.0f} min. {_runs_text(doc)} Ratios are "
        "wall-time ratios; the parse floor is DuckDB reading the same per-task CSVs "
        "(kernel_details "
        "or op_summary, and msprof's task_time) and timeline JSON into typed tables and nothing "
        "else. msprof-analyze is given the export folder itself (`-d *_ascend_pt`, as its docs "
        "say; the bench stops if it logs that it skipped its operator data). npu-triage runs with "
        "its default memory budget (`NPU_TRIAGE_MEMORY_LIMIT` unset: `lean`, memory first) and, in "
        "the rows so named, with the speed-first `NPU_TRIAGE_MEMORY_LIMIT=fast`; always from its "
        "compiled bytecode as an installed package does (pip compiled msprof-analyze's when it "
        "installed it). Peak RSS and file sizes are in MB of 10^6 bytes."
    )


def _floor_text(target: dict[str, Any]) -> str:
    floor = target.get("parse_floor_value")
    return "" if floor is None else f"; the parse floor alone: {floor}"


def _runs_text(doc: dict[str, Any]) -> str:
    repeats = doc.get("repeats", 1)
    if repeats == 1:
        return "Each tool ran once per input."
    return (
        f"Every tool ran {repeats} times per input, interleaved round by round (each "
        "msprof-analyze run right after a round of npu-triage and parse-floor runs), and each row "
        "shows the median wall time (every run's is in the JSON) and the largest peak RSS; "
        "msprof-analyze stopped "
        f"once its runs of an input had taken {MSPROF_BUDGET_S / 60:.0f} minutes "
        f"({_msprof_runs_text(doc)})."
    )


def _msprof_runs_text(doc: dict[str, Any]) -> str:
    runs = [f"{len(r.get('wall_s_runs') or [r['wall_s']])} at {r['size']}" for r in doc["rows"] if r["tool"] == MSPROF]
    return "runs: " + ", ".join(runs) if runs else "not run"


def _summary_lines(doc: dict[str, Any]) -> list[str]:
    lines = [
        f"- scaling {s['layout']} 1x -> 5x, {s['tool']}: time x{s['time_ratio']}, peak RSS x{s['rss_ratio']}"
        for s in doc["scaling"]
    ]
    return lines + [
        f"- {'met' if t['met'] else 'NOT met'}: {t['subject']}: {t['target']} "
        f"(measured {t['value']}, limit {t['limit']}{_floor_text(t)})"
        for t in doc["targets"]
    ]


def markdown_section(doc: dict[str, Any]) -> str:
    """The README's benchmark section, markers included."""
    table = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    table += ["| " + " | ".join(_cells(r)) + " |" for r in doc["rows"]]
    lines = [START, "## Benchmark", "", _INTRO, "", "```sh", "python bench/run.py", "```", ""]
    lines += [_machine_line(doc), "", *table, "", *_summary_lines(doc), ""]
    lines += ["Regenerate this section from the JSON: `python bench/run.py --update-readme`.", END]
    return "\n".join(lines)


def update_readme(readme: Path, doc: dict[str, Any]) -> None:
    """Replace the text between the bench markers (appended at the end when absent), atomically."""
    text = readme.read_text(encoding="utf-8")
    section = markdown_section(doc)
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    text = pattern.sub(lambda _m: section, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + section
    write_text_atomically(readme, text if text.endswith("\n") else text + "\n")
