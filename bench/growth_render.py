"""The growth results -> the terminal's tables and docs/benchmark.md's "Growth" section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.doc_sections import write_marked_section
from bench.growth_fit import MAX_SLOPE, TAIL_POINTS
from bench.growth_results import defects, finished, slopes, targets, with_ratios

START, END = "<!-- growth:start -->", "<!-- growth:end -->"
ROW_HEADERS = (
    "axis",
    "size",
    "input MB",
    "tool",
    "wall s",
    "CPU s",
    "CPU %",
    "peak RSS MB",
    "to floor",
    "to floor, CPU",
    "to msprof",
)
SLOPE_HEADERS = (
    "axis",
    "tool",
    "sizes fitted",
    "wall slope",
    f"wall slope, largest {TAIL_POINTS}",
    "CPU slope",
    f"CPU slope, largest {TAIL_POINTS}",
    "RSS slope",
    "verdict",
)


def _number(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def row_cells(row: dict[str, Any]) -> tuple[str, ...]:
    tool = row["tool"] + ("" if finished(row) else f" (exit {row['exit_code']})")
    if row.get("same_catalog") is not None:
        tool += ", same catalog" if row["same_catalog"] else ", CATALOG DIFFERS"
    return (
        row["axis"],
        f"{row['size']:,}",
        f"{row['input_mb']:.1f}",
        tool,
        f"{row['wall_s']:.2f}",
        f"{row['cpu_s']:.2f}",
        f"{row['cpu_pct']:.0f}",
        f"{row['peak_rss_mb']:.0f}",
        _number(row["ratio_to_floor"]),
        _number(row["cpu_ratio_to_floor"]),
        _number(row["ratio_to_msprof"], 3),
    )


def slope_cells(s: dict[str, Any]) -> tuple[str, ...]:
    sizes = f"{s['sizes'][0]:,} to {s['sizes'][-1]:,} ({len(s['sizes'])} sizes)"
    engine = "DEFECT (" + " and ".join(s["defect"]) + " time)" if s["defect"] else ""
    verdict = engine if s["tool"].startswith("npu-triage") else "reference"
    fitted = (s["slope"], s["tail_slope"], s["cpu_slope"], s["cpu_tail_slope"], s["rss_slope"])
    return (s["axis"], s["tool"], sizes, *map(_number, fitted), verdict)


def _markdown_table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    return [
        "| " + " | ".join(headers) + " |",
        "|" + "---|" * len(headers),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def _target_lines(doc: dict[str, Any]) -> list[str]:
    return [
        f"- {'met' if t['met'] else 'NOT met'}: {t['subject']}: {t['target']} "
        f"(measured {t['value']}, limit {t['limit']})"
        for t in targets(doc["rows"])
    ]


def _machine_line(doc: dict[str, Any]) -> str:
    m, load = doc["machine"], doc["load_average"]
    base = f"; baseline {doc['baseline']}" if doc.get("baseline") else ""
    return (
        f"Measured {m['date']} at commit {doc['commit']}{base} on {m['nproc']} cores, {m['memory_gb']} GB memory, "
        f"{m['cpu']}, Python {m['python']}; load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
        f"(1 / 5 / 15 min) at the start; each command ran {doc['repeats']} time(s) per size (median wall "
        f"time, largest peak RSS); the whole run took {doc['total_run_s'] / 60:.1f} min."
    )


INTRO = f"""Written by `python bench/growth.py` (do not edit by hand). Each axis grows one input at
geometric sizes, generated once under `reports/bench-growth/data/`: `kernels` one msprof run of
the generator's `large` (`diagnose --format json,md`); `gaps` the same with a host synchronize in
the gap before every kernel (`large_host_gaps`); `runs` a tree of small distinct runs (7
scenarios, both layouts, a seed each) given to `batch --jobs 2`; `ranks` a `job_slow_rank` job
whose every rank holds its kernel_details.csv (about 400 kernels; `diagnose --format
json,md,html`: the job page and per-rank reports). The parse floor is DuckDB reading every file of
the input (one `read_csv` per header line of each kind of CSV, as the engine scans them; the timeline
JSON as events, the other JSON as objects) and nothing else; msprof-analyze (`cluster -m all`) is
given the same job folder. Every input is read once before its commands run, so each finds it in the
page cache; each round of a command writes into a new folder, the earlier rounds' folders deleted
only after the last measurement (on ext4, creating files just after thousands were deleted is slower).
"to floor" and "to msprof" are wall-time ratios on the same input, "to floor, CPU" the ratio of CPU times. CPU s
is user + system time (a batch's workers included), CPU % that over wall time (200 = both cores
busy); peak RSS is the largest of the command's processes (a batch's workers each alone). A
slope is the least-squares slope of log(wall time) against log(size); the cost of a command that
grows linearly with its input has a slope of 1 (less while its fixed start-up weighs), so a slope
above {MAX_SLOPE} of npu-triage, over every size or over the largest {TAIL_POINTS}, is a defect;
so is one of its CPU time, which on a machine shared with other work moves less than wall time: a
defect of wall time alone is lost parallelism or the machine's load."""


def section(doc: dict[str, Any]) -> str:
    """docs/benchmark.md's Growth section, markers included."""
    slope_rows = slopes(doc["rows"])
    lines = [START, "## Growth: cost against input size, per axis", "", INTRO, "", _machine_line(doc), ""]
    if doc.get("note"):
        lines += [doc["note"], ""]
    lines += _markdown_table(ROW_HEADERS, [row_cells(r) for r in with_ratios(doc["rows"])])
    lines += ["", *_markdown_table(SLOPE_HEADERS, [slope_cells(s) for s in slope_rows]), ""]
    found = defects(slope_rows)
    lines += [f"- defect: {d}" for d in found] or [f"- no slope of npu-triage above {MAX_SLOPE}"]
    lines += [*_target_lines(doc), "", f"Regenerate: `{doc['command']}`.", END]
    return "\n".join(lines) + "\n"


def write_docs(doc_path: Path, doc: dict[str, Any]) -> None:
    write_marked_section(doc_path, section(doc), START, END)


def print_results(doc: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console(width=170)
    for title, headers, cells in (
        ("growth", ROW_HEADERS, [row_cells(r) for r in with_ratios(doc["rows"])]),
        ("slopes", SLOPE_HEADERS, [slope_cells(s) for s in slopes(doc["rows"])]),
    ):
        table = Table(title=title)
        for h in headers:
            table.add_column(h, justify="left" if h in ("axis", "tool", "sizes fitted", "verdict") else "right")
        for row in cells:
            table.add_row(*row)
        console.print(table)
    for line in [*(f"DEFECT {d}" for d in defects(slopes(doc["rows"]))), *_target_lines(doc)]:
        console.print(line, markup=False)
