"""The malformed-input corpus: each case builds one broken export or archive and says what to expect.

A case's ``expect`` is one of:

- ``usable``: part of the export is broken; a message names ``file`` (and a place matching
  ``where``) and the rest still gives a diagnosis (exit 0 or 1);
- ``unusable``: nothing usable is left; a message names ``file`` and the exit code is 2;
- ``clean``: odd but valid content (hostile op names, BOM, unsorted rows); read whole, no error.
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.malformed import base_exports as base
from tests.malformed.base_exports import (
    APO,
    MSO,
    MSPROF_STAMP,
    OPS,
    TORCH_ROOT,
    csv_cell,
    kd_row,
    trace_bytes,
)

KD = f"{TORCH_ROOT}/{APO}/kernel_details.csv"
TV = f"{TORCH_ROOT}/{APO}/trace_view.json"
OPSUM = f"{base.MSPROF_ROOT}/{MSO}/op_summary_{MSPROF_STAMP}.csv"
MSJSON = f"{base.MSPROF_ROOT}/{MSO}/msprof_{MSPROF_STAMP}.json"
DB = f"{TORCH_ROOT}/{APO}/ascend_pytorch_profiler_0.db"
HOSTILE = [
    "<script>alert('x')</script>",
    'quote "q", comma',
    "new\nline",
    "算子_融合_ÄÖ_😀",
    "a,b;c",
    "</td><img src=x>",
]


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path], Path]  # writes the input under the folder, returns the path to give the command
    expect: str  # 'usable' | 'unusable' | 'clean'
    file: str = ""  # a message must name this file (its base name is enough)
    where: str = ""  # regex the message's location must match (line/byte/table ...)
    command: str = "diagnose"  # 'diagnose' for exports, 'batch' for archives
    kind: str = ""  # the class of fault; the whole CLI runs once per class (default: file family + expect)
    says: str = ""  # regex a problem on ``file`` must match (what must be said)
    tasks: int | None = None  # device tasks ops must hold after reading (what must be kept)

    @property
    def fault_class(self) -> str:
        return self.kind or f"{self.name.split('_')[0]}:{self.expect}"


CASES: list[Case] = []


def case(
    name: str,
    expect: str,
    file: str = "",
    where: str = "",
    command: str = "diagnose",
    kind: str = "",
    says: str = "",
    tasks: int | None = None,
):
    def register(build: Callable[[Path], Path]) -> Callable[[Path], Path]:
        CASES.append(Case(name, build, expect, file, where, command, kind, says, tasks))
        return build

    return register


def torch(folder: Path, edits: dict[str, bytes | None], keep_only: tuple[str, ...] = ()) -> Path:
    """The torch_npu base with files replaced (bytes) or removed (None); keep_only drops the rest."""
    root = base.write_torch_text(folder)
    apo = root / APO
    if keep_only:
        for p in apo.iterdir():
            if p.name not in keep_only:
                p.unlink()
    for rel, data in edits.items():
        path = folder / rel
        if data is None:
            path.unlink()
        else:
            path.write_bytes(data)
    return folder


def msprof(folder: Path, edits: dict[str, bytes | None]) -> Path:
    base.write_msprof_text(folder)
    for rel, data in edits.items():
        if data is None:
            (folder / rel).unlink()
        else:
            (folder / rel).write_bytes(data)
    return folder


def kd_bytes(rows: list[list[str]] | None = None, header: str = base.KD_HEADER, encoding: str = "utf-8") -> bytes:
    return base.kernel_details_text(rows, header).encode(encoding)


def kd_rows(**cells: Callable[[int, list[str]], str]) -> list[list[str]]:
    """The base rows with named cells rewritten: column name -> f(row index, row) -> new text."""
    header = base.KD_HEADER.split(",")
    rows = [kd_row(i, *op) for i, op in enumerate(OPS)]
    for column, f in cells.items():
        j = header.index(column)
        for i, row in enumerate(rows):
            row[j] = f(i, row)
    return rows


def base_kd() -> bytes:
    return kd_bytes()


def garbage(n: int = 4096, seed: int = 7, nul: bool = True) -> bytes:
    data = random.Random(seed).randbytes(n)
    return data if nul else data.replace(b"\x00", b"\xff")


# ---- kernel_details.csv (torch_npu) -----------------------------------------

case("kd_empty_0_bytes", "usable", "kernel_details.csv", "")(lambda d: torch(d, {KD: b""}))
case("kd_empty_alone", "unusable", "kernel_details.csv")(lambda d: torch(d, {KD: b""}, ("kernel_details.csv",)))
case("kd_header_only", "usable", "kernel_details.csv", r"line 2")(
    lambda d: torch(d, {KD: (base.KD_HEADER + "\r\n").encode()})
)
case("kd_header_only_alone", "unusable", "kernel_details.csv", r"line 2")(
    lambda d: torch(d, {KD: (base.KD_HEADER + "\r\n").encode()}, ("kernel_details.csv",))
)
case("kd_truncated_mid_row", "usable", "kernel_details.csv", r"line \d+")(
    lambda d: torch(d, {KD: base_kd()[: base_kd().rindex(b"Cast_7") + 30]}, ("kernel_details.csv",))
)
case("kd_truncated_mid_header", "usable", "kernel_details.csv", r"line 1")(lambda d: torch(d, {KD: base_kd()[:60]}))
case("kd_semicolon_delimiter", "usable", "kernel_details.csv", r"line 1")(
    lambda d: torch(d, {KD: base_kd().replace(b",", b";")})
)
case("kd_tab_delimiter", "usable", "kernel_details.csv", r"line 1")(
    lambda d: torch(d, {KD: base_kd().replace(b"\t", b"").replace(b",", b"\t")})
)
case("kd_binary_garbage", "usable", "kernel_details.csv", r"byte \d+")(lambda d: torch(d, {KD: garbage()}))
case("kd_binary_garbage_alone", "unusable", "kernel_details.csv", r"byte \d+")(
    lambda d: torch(d, {KD: garbage()}, ("kernel_details.csv",))
)
case("kd_high_bytes_no_nul", "usable", "kernel_details.csv", r"byte \d+|line 1")(
    lambda d: torch(d, {KD: garbage(nul=False)})
)
case("kd_utf8_bom", "clean")(lambda d: torch(d, {KD: b"\xef\xbb\xbf" + base_kd()}, ("kernel_details.csv",)))
case("kd_gbk_op_names", "usable", "kernel_details.csv", r"byte \d+")(
    lambda d: torch(
        d,
        {KD: kd_bytes(kd_rows(Name=lambda i, r: f"融合算子_{i}"), encoding="gbk")},
        ("kernel_details.csv",),
    )
)
case("kd_latin1_op_names", "usable", "kernel_details.csv", r"byte \d+")(
    lambda d: torch(
        d,
        {KD: kd_bytes(kd_rows(Name=lambda i, r: f"Größe_{i}"), encoding="latin-1")},
        ("kernel_details.csv",),
    )
)
case("kd_duplicate_column", "usable", "kernel_details.csv", r"line 1")(
    lambda d: torch(
        d,
        {KD: kd_bytes([r + [r[9]] for r in kd_rows()], base.KD_HEADER + ",Duration(us)")},
        ("kernel_details.csv",),
    )
)
case("kd_missing_duration_column", "usable", "kernel_details.csv", r"line 1")(
    lambda d: torch(
        d,
        {KD: kd_bytes([r[:9] + r[10:] for r in kd_rows()], base.KD_HEADER.replace("Duration(us),", ""))},
    )
)
case("kd_missing_duration_column_alone", "unusable", "kernel_details.csv", r"line 1")(
    lambda d: torch(
        d,
        {KD: kd_bytes([r[:9] + r[10:] for r in kd_rows()], base.KD_HEADER.replace("Duration(us),", ""))},
        ("kernel_details.csv",),
    )
)
case("kd_unknown_columns", "clean")(
    lambda d: torch(
        d,
        {KD: kd_bytes([r + ["x", "7"] for r in kd_rows()], base.KD_HEADER + ",Mystery Column,another(us)")},
        ("kernel_details.csv",),
    )
)
case("kd_na_everywhere", "unusable", "kernel_details.csv")(
    lambda d: torch(d, {KD: kd_bytes([["N/A"] * len(r) for r in kd_rows()])}, ("kernel_details.csv",))
)
case("kd_negative_durations", "usable", "kernel_details.csv")(
    lambda d: torch(
        d,
        {KD: kd_bytes(kd_rows(**{"Duration(us)": lambda i, r: "-5.5" if i % 2 else r[9]}))},
        ("kernel_details.csv",),
    )
)
case("kd_nan_inf_numbers", "usable", "kernel_details.csv")(
    lambda d: torch(
        d,
        {KD: kd_bytes(kd_rows(**{"Duration(us)": lambda i, r: ["NaN", "inf", "-inf", "nan"][i] if i < 4 else r[9]}))},
        ("kernel_details.csv",),
    )
)
case("kd_absurd_1e308", "usable", "kernel_details.csv")(
    lambda d: torch(
        d,
        {
            KD: kd_bytes(
                kd_rows(
                    **{
                        "Duration(us)": lambda i, r: "1e308" if i == 3 else r[9],
                        "aicore_time(us)": lambda i, r: "1e308",
                    }
                )
            )
        },
        ("kernel_details.csv",),
    )
)
case("kd_start_1e30", "usable", "kernel_details.csv")(
    lambda d: torch(
        d,
        {KD: kd_bytes(kd_rows(**{"Start Time(us)": lambda i, r: "1e30" if i == 2 else r[8]}))},
        ("kernel_details.csv",),
    )
)
case("kd_timestamps_in_ns", "usable", "kernel_details.csv")(
    lambda d: torch(d, {KD: kd_bytes(kd_rows(**{"Start Time(us)": lambda i, r: str(int(float(r[8]) * 1000))}))})
)
case("kd_unsorted_rows", "clean")(
    lambda d: torch(d, {KD: kd_bytes(list(reversed(kd_rows())))}, ("kernel_details.csv",))
)
case("kd_overlapping_tasks", "clean")(
    lambda d: torch(
        d,
        {KD: kd_bytes(kd_rows(**{"Start Time(us)": lambda i, r: base.start_text(i * 5.0)}))},
        ("kernel_details.csv",),
    )
)
case("kd_hostile_op_names", "clean")(
    lambda d: torch(d, {KD: kd_bytes(kd_rows(Name=lambda i, r: csv_cell(HOSTILE[i % len(HOSTILE)])))})
)
case("kd_unquoted_comma_in_name", "usable", "kernel_details.csv", r"line 4")(
    lambda d: torch(
        d,
        {KD: kd_bytes(kd_rows(Name=lambda i, r: "Fused,Op" if i == 2 else r[4]))},
        ("kernel_details.csv",),
    )
)
case("kd_unbalanced_quote", "usable", "kernel_details.csv", r"line \d+")(
    lambda d: torch(
        d,
        {KD: kd_bytes(kd_rows(Name=lambda i, r: '"broken' if i == 5 else r[4]))},
        ("kernel_details.csv",),
    )
)
case("kd_blank_lines_only", "usable", "kernel_details.csv", r"line \d+")(lambda d: torch(d, {KD: b"\n\n\n"}))
case("kd_is_a_json_file", "usable", "kernel_details.csv", r"line 1")(lambda d: torch(d, {KD: trace_bytes()}))

# ---- trace_view.json --------------------------------------------------------

case("tv_empty_0_bytes", "usable", "trace_view.json")(lambda d: torch(d, {TV: b""}))
case("tv_empty_alone", "unusable", "trace_view.json")(lambda d: torch(d, {TV: b""}, ("trace_view.json",)))
case("tv_truncated_mid_json", "usable", "trace_view.json")(
    lambda d: torch(d, {TV: trace_bytes()[: len(trace_bytes()) // 2]})
)
case("tv_truncated_alone", "usable", "trace_view.json", r"byte \d+")(
    lambda d: torch(d, {TV: trace_bytes()[: len(trace_bytes()) // 2]}, ("trace_view.json",))
)
case("tv_binary_garbage", "usable", "trace_view.json")(lambda d: torch(d, {TV: garbage()}))
case("tv_object_without_events", "usable", "trace_view.json")(lambda d: torch(d, {TV: b'{"foo": 1}'}))
case("tv_events_without_ts", "usable", "trace_view.json")(
    lambda d: torch(
        d,
        {TV: trace_bytes([{k: v for k, v in e.items() if k != "ts"} for e in base.trace_events()])},
    )
)
case("tv_timestamps_in_ns", "unusable", "trace_view.json", r"field .ts.")(
    lambda d: torch(
        d,
        {
            TV: trace_bytes(
                [{**e, "ts": str(int(float(e["ts"]) * 1000))} if "ts" in e else e for e in base.trace_events()]
            )
        },
        ("trace_view.json",),
    )
)
case("tv_utf8_bom", "clean")(lambda d: torch(d, {TV: b"\xef\xbb\xbf" + trace_bytes()}, ("trace_view.json",)))
case("tv_nan_and_huge_dur", "usable", "trace_view.json")(
    lambda d: torch(
        d,
        {TV: trace_bytes().replace(b'"dur": 313.886', b'"dur": NaN').replace(b'"dur": 120.5', b'"dur": 1e308')},
        ("trace_view.json",),
    )
)
case("tv_hostile_names", "clean")(
    lambda d: torch(
        d,
        {
            TV: trace_bytes(
                [
                    {**e, "name": HOSTILE[i % len(HOSTILE)]} if e.get("ph") == "X" and i > 3 else e
                    for i, e in enumerate(base.trace_events())
                ]
            )
        },
        ("trace_view.json",),
    )
)
case("tv_latin1_bytes", "usable", "trace_view.json")(
    lambda d: torch(d, {TV: trace_bytes().replace(b"Relu_2", b"Gr\xf6\xdfe")}, ("trace_view.json",))
)

# ---- the other torch_npu files ----------------------------------------------

OTHER = f"{TORCH_ROOT}/{APO}"
case("op_statistic_empty", "usable", "op_statistic.csv")(lambda d: torch(d, {f"{OTHER}/op_statistic.csv": b""}))
case("op_statistic_garbage", "usable", "op_statistic.csv")(
    lambda d: torch(d, {f"{OTHER}/op_statistic.csv": garbage(seed=3)})
)
case("api_statistic_truncated", "usable", "api_statistic.csv", r"line \d+")(
    lambda d: torch(
        d,
        {
            f"{OTHER}/api_statistic.csv": b"Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),"
            b"Variance\nacl,aclnnMatmul,30.83,3,10.277,7.67,14.54,9.238\nacl,aclnnAd"
        },
    )
)
case("step_trace_time_semicolons", "usable", "step_trace_time.csv", r"line 1")(
    lambda d: torch(d, {f"{OTHER}/step_trace_time.csv": b"Step;Computing;Free\n50;658.7;341.3\n"})
)
case("profiler_info_truncated", "usable", "profiler_info_0.json")(
    lambda d: torch(d, {f"{TORCH_ROOT}/profiler_info_0.json": json.dumps(base.profiler_info()).encode()[:40]})
)
case("profiler_info_binary", "usable", "profiler_info_0.json")(
    lambda d: torch(d, {f"{TORCH_ROOT}/profiler_info_0.json": garbage(64)})
)
case("profiler_info_deeply_nested", "usable", "profiler_info_0.json")(
    lambda d: torch(d, {f"{TORCH_ROOT}/profiler_info_0.json": b"[" * 100_000})
)
case("msprof_device_info_deeply_nested", "usable", "info.json.0")(
    lambda d: msprof(d, {f"{base.MSPROF_ROOT}/device_0/info.json.0": b"{" + b'"a":[' * 50_000})
)
case("communication_json_truncated", "usable", "communication.json")(
    lambda d: torch(d, {f"{OTHER}/communication.json": b'{"step50": {"collective": {"allreduce@1": {"Comm'})
)

# ---- native msprof text -----------------------------------------------------

case("msprof_op_summary_empty", "usable", "op_summary_")(lambda d: msprof(d, {OPSUM: b""}))
case("msprof_op_summary_truncated_mid_row", "usable", "op_summary_", r"line \d+")(
    lambda d: msprof(d, {OPSUM: base.op_summary_text().encode()[:-40]})
)
case("msprof_op_summary_tab_delimited", "usable", "op_summary_", r"line 1")(
    lambda d: msprof(d, {OPSUM: base.op_summary_text().replace("\t", "").replace(",", "\t").encode()})
)
case("msprof_task_time_garbage", "usable", "task_time_", r"byte \d+")(
    lambda d: msprof(d, {f"{base.MSPROF_ROOT}/{MSO}/task_time_{MSPROF_STAMP}.csv": garbage(seed=11)})
)
case("msprof_json_truncated", "usable", "msprof_")(
    lambda d: msprof(d, {MSJSON: json.dumps(base.trace_events(), indent=2).encode()[:700]})
)
case("msprof_empty_slice_beside_good_one", "usable", "op_summary_slice_1_")(
    lambda d: msprof(
        d,
        {
            OPSUM: None,
            f"{base.MSPROF_ROOT}/{MSO}/op_summary_slice_0_{MSPROF_STAMP}.csv": base.op_summary_text().encode(),
            f"{base.MSPROF_ROOT}/{MSO}/op_summary_slice_1_{MSPROF_STAMP}.csv": b"",
        },
    )
)
case("msprof_device_info_garbage", "usable", "info.json.0")(
    lambda d: msprof(d, {f"{base.MSPROF_ROOT}/device_0/info.json.0": b'{"platform_version": '})
)

# ---- SQLite -----------------------------------------------------------------


def db_with(folder: Path, tables: tuple[str, ...]) -> Path:
    base.write_torch_db(folder, tables)
    return folder


def corrupt_db(folder: Path, at: float, n: int = 2048) -> Path:
    db = base.write_torch_db(folder)
    data = bytearray(db.read_bytes())
    start = int(len(data) * at)
    data[start : start + n] = random.Random(5).randbytes(min(n, len(data) - start))
    db.write_bytes(bytes(data))
    return folder


case("sqlite_missing_tables", "unusable", "ascend_pytorch_profiler_0.db", r"table")(
    lambda d: db_with(d, ("STRING_IDS", "NPU_INFO"))
)
case("sqlite_missing_compute_info", "usable", "ascend_pytorch_profiler_0.db", r"table")(
    lambda d: db_with(d, ("STRING_IDS", "TASK", "NPU_INFO"))
)
case("sqlite_corrupt_pages", "unusable", "ascend_pytorch_profiler_0.db")(lambda d: corrupt_db(d, 0.3, 1 << 20))
case("sqlite_corrupt_header", "unusable", "ascend_pytorch_profiler_0.db")(lambda d: corrupt_db(d, 0.0, 100))
case("sqlite_truncated", "unusable", "ascend_pytorch_profiler_0.db")(
    lambda d: (lambda p: (p.write_bytes(p.read_bytes()[:5000]), d)[1])(base.write_torch_db(d))
)
case("sqlite_0_bytes", "unusable", "ascend_pytorch_profiler_0.db")(
    lambda d: (lambda p: (p.write_bytes(b""), d)[1])(base.write_torch_db(d))
)
case("sqlite_text_file", "unusable", "ascend_pytorch_profiler_0.db")(
    lambda d: (lambda p: (p.write_bytes(b"not a database\n" * 50), d)[1])(base.write_torch_db(d))
)
# The locked case is built by its test, which holds the lock while the command runs.
LOCKED_DB = DB

# ---- whole folders ----------------------------------------------------------


def unrelated(folder: Path) -> Path:
    (folder / "notes").mkdir()
    (folder / "notes" / "README.txt").write_text("not a profile\n")
    (folder / "photo.png").write_bytes(garbage(512))
    (folder / "results.csv").write_text("a,b\n1,2\n")
    return folder


case("empty_folder", "unusable", "")(lambda d: d)
case("unrelated_files", "unusable", "")(unrelated)
case("every_file_broken", "unusable", "kernel_details.csv")(
    lambda d: torch(
        d,
        {
            KD: b"",
            TV: b"[{",
            f"{OTHER}/op_statistic.csv": b"",
            f"{OTHER}/api_statistic.csv": garbage(),
            f"{OTHER}/step_trace_time.csv": b"x",
        },
    )
)

case("export_truncated_early", "unusable", "kernel_details.csv")(
    lambda d: torch(d, {KD: base_kd()[:60], TV: trace_bytes()[:300]}, ("kernel_details.csv", "trace_view.json"))
)
case("export_truncated_late", "usable", "kernel_details.csv", r"line \d+")(
    lambda d: torch(d, {KD: base_kd()[:700], TV: trace_bytes()[:900]})
)

# ---- archives (batch) -------------------------------------------------------


def _export_files(folder: Path) -> list[tuple[str, bytes]]:
    root = base.write_torch_text(folder / "src")
    files = [(p.relative_to(folder / "src").as_posix(), p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file()]
    shutil.rmtree(folder / "src")
    return files


def zip_with(folder: Path, evil: list[tuple[str, bytes]]) -> Path:
    path = folder / "runs.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in _export_files(folder) + evil:
            zf.writestr(name, data)
    return path


def tar_with(folder: Path, evil: Callable[[tarfile.TarFile], None]) -> Path:
    path = folder / "runs.tar"
    with tarfile.open(path, "w") as tf:
        for name, data in _export_files(folder):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        evil(tf)
    return path


def _tar_symlink_out(tf: tarfile.TarFile) -> None:
    info = tarfile.TarInfo(f"{TORCH_ROOT}/{APO}/op_statistic_link.csv")
    info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
    tf.addfile(info)
    info = tarfile.TarInfo("escape_dir")
    info.type, info.linkname = tarfile.SYMTYPE, "../../.."
    tf.addfile(info)
    data = b"pwned"
    info = tarfile.TarInfo("escape_dir/pwned.txt")
    info.size = len(data)
    tf.addfile(info, io.BytesIO(data))


def _tar_absolute(tf: tarfile.TarFile) -> None:
    data = b"pwned"
    for name in ("/tmp/npu_triage_pwned_abs.txt", "../npu_triage_pwned_rel.txt"):
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))


case("zip_entry_dot_dot", "usable", "../", command="batch")(
    lambda d: zip_with(d, [("../../npu_triage_pwned.txt", b"pwned")])
)
case("zip_entry_absolute", "usable", "/tmp/", command="batch")(
    lambda d: zip_with(d, [("/tmp/npu_triage_pwned_zip.txt", b"pwned")])
)
case("tar_entry_absolute_and_dot_dot", "usable", "npu_triage_pwned", command="batch")(
    lambda d: tar_with(d, _tar_absolute)
)
case("tar_symlink_out", "usable", "link", command="batch")(lambda d: tar_with(d, _tar_symlink_out))
case("zip_truncated", "unusable", "runs.zip", command="batch")(
    lambda d: (lambda p: (p.write_bytes(p.read_bytes()[:300]), p)[1])(zip_with(d, []))
)

ESCAPE_MARKERS = (
    "npu_triage_pwned.txt",
    "npu_triage_pwned_zip.txt",
    "npu_triage_pwned_abs.txt",
    "npu_triage_pwned_rel.txt",
    "pwned.txt",
)


def by_name() -> dict[str, Case]:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    return {c.name: c for c in CASES}


def no_escape_happened(folder: Path) -> list[str]:
    """Marker files an archive tried to write outside its extraction folder and that exist now."""
    places = [folder.parent, folder.parent.parent, Path("/tmp"), Path(os.sep)]
    return [str(p / m) for p in places for m in ESCAPE_MARKERS if (p / m).exists()]


# The reader-side classes (header validation, duplicates, negative times, line ends, SQLite WAL and
# types, lone surrogates) live in their own module; importing it registers them.
from tests.malformed import (  # noqa: E402, F401
    reader_cases,  # noqa: E402, F401
    sqlite_cases,
    trace_cases,
)
