"""Reader-side malformed cases: headers that do not describe their rows, repeated headers, duplicate rows,
negative times, line ends, very wide files, lone surrogates in a trace, SQLite WAL, missing tables and
wrong types. Each states what must be said (``says``) and what must be kept (``tasks``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from tests.malformed import base_exports as base
from tests.malformed.base_exports import APO, MSO, MSPROF_STAMP, OPS, TORCH_ROOT, kd_row
from tests.malformed.cases import KD, OPSUM, case, kd_bytes, kd_rows, msprof, torch

N = len(OPS)
OTHER = f"{TORCH_ROOT}/{APO}"
TASK_TIME = f"{base.MSPROF_ROOT}/{MSO}/task_time_{MSPROF_STAMP}.csv"


def _text(rel: str) -> Callable[[], str]:
    """The base text of one file of the torch_npu or msprof base export."""

    def read() -> str:
        folder = Path(tempfile.mkdtemp())
        try:
            if rel.startswith(TORCH_ROOT):
                base.write_torch_text(folder)
            else:
                base.write_msprof_text(folder)
            return (folder / rel).read_bytes().decode()
        finally:
            shutil.rmtree(folder)

    return read


def _lines(text: str) -> tuple[list[str], str]:
    """The lines of ``text`` and the line end it uses."""
    end = "\r\n" if "\r\n" in text else "\n"
    return text.split(end)[:-1], end


def _write(rel: str, mutate: Callable[[str], str]) -> Callable[[Path], Path]:
    """A build writing the base export with file ``rel`` rewritten by ``mutate`` (text -> text)."""
    original = _text(rel)

    def build(folder: Path) -> Path:
        data = mutate(original()).encode()
        return torch(folder, {rel: data}) if rel.startswith(TORCH_ROOT) else msprof(folder, {rel: data})

    return build


def repeat_header(text: str) -> str:
    lines, end = _lines(text)
    return end.join(lines[:2] + [lines[0]] + lines[2:]) + end


def duplicate_rows(text: str) -> str:
    lines, end = _lines(text)
    return end.join(lines + lines[1:]) + end


def cr_only(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r")


def mixed_line_ends(text: str) -> str:
    lines, _ = _lines(text)
    return "".join(line + ("\r\n" if i % 2 else "\n") for i, line in enumerate(lines))


def no_final_line_break(text: str) -> str:
    return text.rstrip("\r\n")


def header_extra_column(text: str) -> str:
    lines, end = _lines(text)
    head = lines[0].split(",")
    return end.join([",".join(head[:2] + ["Extra"] + head[2:])] + lines[1:]) + end


def header_missing_column(text: str) -> str:
    lines, end = _lines(text)
    head = lines[0].split(",")
    return end.join([",".join(head[:1] + head[2:])] + lines[1:]) + end


# (file, what the reader of that file must keep when a mutation costs it nothing)
CSV_FILES = {
    "kd": KD,
    "opsum": OPSUM,
    "opstat": f"{OTHER}/op_statistic.csv",
    "apistat": f"{OTHER}/api_statistic.csv",
    "steptime": f"{OTHER}/step_trace_time.csv",
    "tasktime": TASK_TIME,
}
_TASKS = {"kd": N, "opsum": N}

for short, rel in CSV_FILES.items():
    name = rel.rsplit("/", 1)[-1].split(f"_{MSPROF_STAMP}")[0].removesuffix(".csv")
    tasks = _TASKS.get(short)
    case(f"{short}_repeated_header_row", "usable", name, kind="csv-repeated-header", says="repeated", tasks=tasks)(
        _write(rel, repeat_header)
    )
    case(f"{short}_duplicate_rows", "usable", name, kind="csv-duplicate-rows", says="exact duplicate", tasks=tasks)(
        _write(rel, duplicate_rows)
    )
    case(f"{short}_cr_only_line_ends", "clean", kind="csv-line-ends", tasks=tasks)(_write(rel, cr_only))
    case(f"{short}_mixed_lf_crlf", "clean", kind="csv-line-ends", tasks=tasks)(_write(rel, mixed_line_ends))
    case(f"{short}_complete_without_final_break", "clean", kind="csv-line-ends", tasks=tasks)(
        _write(rel, no_final_line_break)
    )
    case(f"{short}_header_extra_column", "usable", name, r"line 2", kind="csv-header-shift", says="header names")(
        _write(rel, header_extra_column)
    )
    case(f"{short}_header_missing_column", "usable", name, r"line \d+", kind="csv-header-shift", says="")(
        _write(rel, header_missing_column)
    )


def _kd(rows: list[list[str]], header: str = base.KD_HEADER, keep_only: tuple[str, ...] = ()) -> Callable:
    return lambda d: torch(d, {KD: kd_bytes(rows, header)}, keep_only)


def _cell(column: str, value: str, rows: tuple[int, ...]) -> list[list[str]]:
    return kd_rows(**{column: lambda i, r: value if i in rows else r[base.KD_HEADER.split(",").index(column)]})


# ---- kernel_details: cells that do not parse as the header says -------------

SWAPPED = "Duration(us),Start Time(us),Accelerator Core"

case("kd_header_extra_column_alone", "unusable", "kernel_details.csv", r"line 2", kind="csv-header-shift")(
    _kd(kd_rows(), base.KD_HEADER.replace("Type,", "Type,Extra,", 1), ("kernel_details.csv",))
)
case(
    "kd_header_swapped_names",
    "usable",
    "kernel_details.csv",
    r"line 2, column 'Duration\(us\)'",
    kind="csv-cell-type",
    says=r"\d+ of \d+ rows do not fit the header",
)(_kd(kd_rows(), base.KD_HEADER.replace("Accelerator Core,Start Time(us),Duration(us)", SWAPPED)))
case(
    "kd_text_in_duration_one_row",
    "usable",
    "kernel_details.csv",
    r"line 4, column 'Duration\(us\)'",
    kind="csv-cell-type",
    says=r"1 cells of 'Duration\(us\)' are not numbers .*their rows are kept",
    tasks=N,
)(_kd(_cell("Duration(us)", "fast", (2,))))
case(
    "kd_timestamp_text_in_start_one_row",
    "usable",
    "kernel_details.csv",
    r"line 3, column 'Start Time\(us\)'",
    kind="csv-cell-type",
    says=r"1 cells of 'Start Time\(us\)' are not numbers .*their rows are kept",
    tasks=N,
)(_kd(_cell("Start Time(us)", "2025-01-09 07:34:43.063", (1,))))
case(
    "kd_text_in_task_id_one_row",
    "usable",
    "kernel_details.csv",
    r"line 7, column 'Task ID'",
    kind="csv-cell-type",
    says=r"1 cells of 'Task ID' are not numbers .*their rows are kept",
    tasks=N,
)(_kd(_cell("Task ID", "AI_CORE", (5,))))
case(
    "kd_text_in_metric_one_row",
    "usable",
    "kernel_details.csv",
    r"line 2, column 'aicore_time\(us\)'",
    kind="csv-cell-type",
    says=r"1 cells of 'aicore_time\(us\)' are not numbers .*their rows are kept",
    tasks=N,
)(_kd(_cell("aicore_time(us)", "n.a.", (0,))))
case(
    "kd_text_in_duration_many_rows",
    "usable",
    "kernel_details.csv",
    r"line 3, column 'Duration\(us\)'",
    kind="csv-cell-type",
    says=r"3 cells of 'Duration\(us\)' are not numbers",
)(_kd(_cell("Duration(us)", "fast", (1, 3, 5))))
case(
    "kd_text_in_duration_many_rows_alone",
    "usable",
    "kernel_details.csv",
    r"line 3, column 'Duration\(us\)'",
    kind="csv-cell-type",
)(lambda d: _kd(_cell("Duration(us)", "fast", (1, 3, 5)), keep_only=("kernel_details.csv",))(d))
case(
    "kd_timestamp_in_duration",
    "usable",
    "kernel_details.csv",
    kind="csv-cell-type",
    says="duration of years",
    tasks=N,
)(_kd(_cell("Duration(us)", f"{base.T0_US}.000", (4,))))
case(
    "kd_more_cells_than_header_two_rows",
    "usable",
    "kernel_details.csv",
    r"line 3",
    kind="csv-cell-type",
    says="do not fit the header",
)(_kd([r + ["surplus"] if i in (1, 4) else r for i, r in enumerate(kd_rows())]))
case("kd_na_with_tab_in_numbers", "clean", kind="csv-cell-type", tasks=N)(
    _kd(_cell("aicore_time(us)", "N/A\t", (0, 1, 2)))
)
case("kd_same_task_twice_with_other_duration", "clean", kind="csv-duplicate-rows", tasks=N + 1)(
    _kd(kd_rows() + [kd_row(2, *OPS[2][:4], 99.0)])
)
case(
    "kd_negative_start_time",
    "usable",
    "kernel_details.csv",
    r"column start_ns",
    kind="csv-negative-times",
    says="negative time",
    tasks=N,
)(_kd(_cell("Start Time(us)", "-12.500\t", (3,))))
case(
    "opsum_negative_duration",
    "usable",
    "op_summary_",
    r"column dur_us",
    kind="csv-negative-times",
    says="negative duration",
    tasks=N,
)(_write(OPSUM, lambda t: t.replace(",313.886,", ",-313.886,", 1)))
case(
    "tasktime_negative_duration",
    "usable",
    "task_time_",
    r"column dur_us",
    kind="csv-negative-times",
    says="negative duration",
)(_write(TASK_TIME, lambda t: t.replace(",53.741,", ",-53.741,", 1)))


def _wide(columns: int) -> Callable[[Path], Path]:
    header = base.KD_HEADER + "".join(f",extra_{i}(us)" for i in range(columns))
    rows = [r + ["1.0"] * columns for r in kd_rows()]
    return _kd(rows, header, ("kernel_details.csv",))


case("kd_5000_columns", "clean", kind="csv-wide", tasks=N)(_wide(5000))
case(
    "kd_5000_header_columns_rows_short",
    "unusable",
    "kernel_details.csv",
    r"line 2",
    kind="csv-wide",
    says="header names",
)(_kd(kd_rows(), base.KD_HEADER + "".join(f",x{i}" for i in range(5000)), ("kernel_details.csv",)))


def _many_rows(n: int) -> list[list[str]]:
    """``n`` rows of the base ops, each later than the last (a file past the 64 KiB head)."""
    rows = []
    for i in range(n):
        op = OPS[i % N]
        rows.append(kd_row(i, f"{op[0]}_{i}", op[1], op[2], i * 1000.0, op[4]))
    return rows


def _mixed_beyond_head(folder: Path) -> Path:
    text = base.kernel_details_text(_many_rows(400))
    lines, _ = _lines(text)
    data = "\r\n".join(lines[:300]) + "\r\n" + "\n".join(lines[300:]) + "\n"
    return torch(folder, {KD: data.encode()}, ("kernel_details.csv",))


case("kd_mixed_line_ends_past_first_bytes", "clean", kind="csv-line-ends", tasks=400)(_mixed_beyond_head)


def _mixed_beyond_head_with_header_again(folder: Path) -> Path:
    lines, _ = _lines(base.kernel_details_text(_many_rows(400)))
    data = "\r\n".join(lines[:300]) + "\r\n" + "\n".join([lines[0], *lines[300:]]) + "\n"
    return torch(folder, {KD: data.encode()}, ("kernel_details.csv",))


case(
    "kd_mixed_line_ends_and_repeated_header_past_first_bytes",
    "usable",
    "kernel_details.csv",
    kind="csv-repeated-header",
    says="1 repeated header rows",
    tasks=400,
)(_mixed_beyond_head_with_header_again)
case("kd_cr_only_many_rows", "clean", kind="csv-line-ends", tasks=400)(
    lambda d: torch(d, {KD: cr_only(base.kernel_details_text(_many_rows(400))).encode()}, ("kernel_details.csv",))
)
case(
    "kd_last_row_cut_without_break",
    "usable",
    "kernel_details.csv",
    r"line \d+",
    kind="csv-truncated",
    says="ends mid-row",
)(lambda d: torch(d, {KD: kd_bytes(kd_rows()[:-1] + [kd_rows()[-1][:12]]).rstrip(b"\r\n")}))

AICORE = f"{base.MSPROF_ROOT}/{MSO}/ai_core_utilization_{MSPROF_STAMP}.csv"
_AICORE_HEAD = "Device_id,Core ID,mac_ratio,mte2_ratio\n"
case("aicore_repeated_header_row", "usable", "ai_core_utilization_", kind="csv-repeated-header", says="repeated")(
    lambda d: msprof(d, {AICORE: (_AICORE_HEAD + "0,Core0,0.5,0.2\n" + _AICORE_HEAD + "0,Core1,0.4,0.3\n").encode()})
)
case(
    "aicore_text_in_metric",
    "usable",
    "ai_core_utilization_",
    r"line 3, column 'mac_ratio'",
    kind="csv-cell-type",
    says=r"1 cells of 'mac_ratio' are not numbers .*their rows are kept",
)(lambda d: msprof(d, {AICORE: (_AICORE_HEAD + "0,Core0,0.5,0.2\n0,Core1,high,0.3\n0,Average,0.5,0.2\n").encode()}))
