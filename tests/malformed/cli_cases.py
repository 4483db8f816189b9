"""Hostile command lines: each case builds its inputs, gives the argv, and says the exit code and the message.

The classes (``cls``) are what issue 29 lists beside the readers: an output path that must not be
written (inside an export, a file for a folder, a folder for a file, a wrong database), a wrong
option or environment value, a file where a folder is expected, one bad item in a tree, hostile
strings in an export, rule SQL reaching outside the loaded tables, and hostile archives. Every
case runs through the whole CLI (``tests/test_cli_hostile.py``); the input folder ``in/`` must be
byte-identical afterwards and nothing may appear inside an export.
"""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from tests.malformed import base_exports as base
from tests.malformed.base_exports import APO, TORCH_ROOT


@dataclass(frozen=True)
class Run:
    """What a case runs: the arguments, extra environment variables and the working folder (None: tmp)."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None


@dataclass(frozen=True)
class CliCase:
    name: str
    cls: str
    setup: Callable[[Path], Run]  # builds the inputs under tmp/in (outputs go elsewhere) -> what to run
    code: int
    message: str  # a regex stderr (or stdout for code 0) must match; '' for none


CLI_CASES: list[CliCase] = []


def cli_case(name: str, cls: str, code: int, message: str = ""):
    def register(setup: Callable[[Path], Run]) -> Callable[[Path], Run]:
        CLI_CASES.append(CliCase(name, cls, setup, code, message))
        return setup

    return register


def export(tmp: Path) -> Path:
    """The torch_npu text export under tmp/in; returns its root."""
    root = tmp / "in" / TORCH_ROOT
    if not root.exists():
        (tmp / "in").mkdir(exist_ok=True)
        base.write_torch_text(tmp / "in")
    return root


def sqlite_file(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x INTEGER)")
    con.commit()
    con.close()
    return path


def other_duckdb(path: Path) -> Path:
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE customers (id INTEGER, name VARCHAR)")
    con.execute("INSERT INTO customers VALUES (1, 'x')")
    con.close()
    return path


def a_file(path: Path, text: str = "not a folder\n") -> Path:
    path.write_text(text)
    return path


INSIDE = r"inside the export folder .*being read"

# ---- output paths inside an export ------------------------------------------------------------

cli_case("diagnose_out_inside_export", "output_inside_export", 2, rf"--out .*{INSIDE}")(
    lambda t: Run(["diagnose", str(export(t)), "--out", str(export_root(t) / "reports")])
)
cli_case("diagnose_default_out_from_inside_export", "output_inside_export", 2, rf"--out reports.*{INSIDE}")(
    lambda t: Run(["diagnose", APO], cwd=export(t))
)
cli_case("diagnose_out_in_profiler_output", "output_inside_export", 2, INSIDE)(
    lambda t: Run(["diagnose", str(export(t) / APO), "--out", str(export_root(t) / APO / "r")])
)
cli_case("diagnose_out_parent_puts_reports_in_export", "output_inside_export", 2, INSIDE)(
    lambda t: Run(["diagnose", str(export(t)), "--out", str(t / "in")])
)
cli_case("diagnose_db_inside_export", "output_inside_export", 2, rf"--db .*{INSIDE}")(
    lambda t: Run(["diagnose", str(export(t)), "--out", str(t / "out"), "--db", str(export_root(t) / "r.duckdb")])
)
cli_case("ingest_db_inside_export_from_profiler_output", "output_inside_export", 2, rf"--db .*{INSIDE}")(
    lambda t: Run(["ingest", str(export(t) / APO), "--db", str(export_root(t) / "runs.duckdb")])
)
cli_case("ingest_parquet_inside_export", "output_inside_export", 2, rf"--parquet .*{INSIDE}")(
    lambda t: Run(["ingest", str(export(t)), "--parquet", str(export_root(t) / "pq")])
)
cli_case("batch_catalog_inside_export", "output_inside_export", 2, rf"--catalog .*{INSIDE}")(
    lambda t: Run(["batch", str(export(t).parent), "--catalog", str(export_root(t) / "c.duckdb"), "--jobs", "1"])
)
cli_case("diff_html_inside_export", "output_inside_export", 2, rf"--html .*{INSIDE}")(
    lambda t: Run(["diff", str(export(t)), str(export_root(t)), "--html", str(export_root(t) / "d.html")])
)
cli_case("sweep_html_inside_export", "output_inside_export", 2, rf"--html .*{INSIDE}")(
    lambda t: Run(["sweep", f"{export(t)}:bs=8", "--html", str(export_root(t) / APO / "s.html")])
)


def export_root(tmp: Path) -> Path:
    return tmp / "in" / TORCH_ROOT


# ---- output paths of the wrong kind -------------------------------------------------------------

cli_case("diagnose_out_is_a_file", "output_kind", 2, r"--out .*is a file, not a folder")(
    lambda t: Run(["diagnose", str(export(t)), "--out", str(a_file(t / "out.txt"))])
)
cli_case("diagnose_out_below_a_file", "output_kind", 2, r"--out .*is a file, not a folder")(
    lambda t: Run(["diagnose", str(export(t)), "--out", str(a_file(t / "out.txt") / "sub")])
)
cli_case("ingest_db_is_a_folder", "output_kind", 2, r"--db .*is a folder, not a file")(
    lambda t: Run(["ingest", str(export(t)), "--db", str(_mkdir(t / "db"))])
)
cli_case("ingest_parquet_is_a_file", "output_kind", 2, r"--parquet .*is a file, not a folder")(
    lambda t: Run(["ingest", str(export(t)), "--parquet", str(a_file(t / "pq"))])
)
cli_case("export_parquet_is_a_file", "output_kind", 2, r"--parquet .*is a file, not a folder")(
    lambda t: Run(["export", str(_catalog(t)), "--parquet", str(a_file(t / "pq"))])
)
cli_case("diff_json_below_a_file", "output_kind", 2, r"--json .*is a file, not a folder")(
    lambda t: Run(["diff", str(export(t)), str(export(t)), "--json", str(a_file(t / "x") / "d.json")])
)
cli_case("sweep_html_is_a_folder", "output_kind", 2, r"--html .*is a folder, not a file")(
    lambda t: Run(["sweep", f"{export(t)}:bs=8", "--html", str(_mkdir(t / "page"))])
)


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _catalog(tmp: Path) -> Path:
    from analyzer.runs.catalog import open_catalog

    path = tmp / "catalog.duckdb"
    open_catalog(path).close()
    return path


# ---- database and catalog files that are something else -----------------------------------------

cli_case("ingest_db_is_sqlite", "database_file", 2, r"--db .*not a DuckDB file")(
    lambda t: Run(["ingest", str(export(t)), "--db", str(sqlite_file(t / "x.db"))])
)
cli_case("ingest_db_is_unrelated_duckdb", "database_file", 2, r"--db .*not a DuckDB file of `npu-triage ingest`")(
    lambda t: Run(["ingest", str(export(t)), "--db", str(other_duckdb(t / "x.duckdb"))])
)
cli_case("ingest_db_is_text", "database_file", 2, r"--db .*not a DuckDB file")(
    lambda t: Run(["ingest", str(export(t)), "--db", str(a_file(t / "x.duckdb"))])
)
cli_case("batch_catalog_is_sqlite", "database_file", 2, r"--catalog .*not an npu-triage catalog \(not a DuckDB")(
    lambda t: Run(["batch", str(export(t).parent), "--catalog", str(sqlite_file(t / "c.db")), "--jobs", "1"])
)
cli_case("batch_catalog_is_unrelated_duckdb", "database_file", 2, r"--catalog .*not an npu-triage catalog")(
    lambda t: Run(["batch", str(export(t).parent), "--catalog", str(other_duckdb(t / "c.duckdb")), "--jobs", "1"])
)
cli_case("batch_catalog_is_the_archive", "database_file", 2, r"--catalog .*not an npu-triage catalog")(
    lambda t: Run(["batch", str(_zip(t)), "--catalog", str(_zip(t)), "--jobs", "1"])
)
cli_case("query_catalog_is_sqlite", "database_file", 2, r"not an npu-triage catalog \(not a DuckDB file\)")(
    lambda t: Run(["query", str(sqlite_file(t / "c.db")), "SELECT 1"])
)
cli_case("runs_catalog_is_unrelated_duckdb", "database_file", 2, r"not an npu-triage catalog")(
    lambda t: Run(["runs", str(other_duckdb(t / "c.duckdb"))])
)
cli_case("diagnose_db_input_is_sqlite", "database_file", 2, r"--db .*not a DuckDB file")(
    lambda t: Run(["diagnose", "--db", str(sqlite_file(t / "x.db")), "--out", str(t / "out")])
)


def _zip(tmp: Path) -> Path:
    path = tmp / "in" / "runs.zip"
    if not path.exists():
        root = export(tmp)
        with zipfile.ZipFile(path, "w") as zf:
            for p in sorted(root.rglob("*")):
                if p.is_file():
                    zf.write(p, p.relative_to(root.parent).as_posix())
    return path


# ---- option and environment values ---------------------------------------------------------------


def _diagnose(tmp: Path, *extra: str, env: dict[str, str] | None = None) -> Run:
    return Run(["diagnose", str(export(tmp)), "--out", str(tmp / "out"), "--format", "json", *extra], env or {})


LIMIT = "NPU_TRIAGE_MEMORY_LIMIT"
cli_case("env_memory_limit_bogus", "option_value", 2, rf"{LIMIT}: 'bogus' is not a size")(
    lambda t: _diagnose(t, env={LIMIT: "bogus"})
)
cli_case("env_memory_limit_zero", "option_value", 2, rf"{LIMIT}: '0' is below")(
    lambda t: _diagnose(t, env={LIMIT: "0"})
)
cli_case("env_memory_limit_bogus_batch", "option_value", 2, rf"{LIMIT}: '12 parsecs' is not a size")(
    lambda t: Run(["batch", str(export(t).parent), "--catalog", str(t / "c.duckdb")], {LIMIT: "12 parsecs"})
)
cli_case("env_memory_limit_size_is_taken", "option_value", 0)(lambda t: _diagnose(t, env={LIMIT: "2GB"}))
for _value in ("nan", "inf", "-inf", "1e400"):
    cli_case(f"set_threshold_{_value}", "option_value", 2, r"mte-share-high\.threshold=.*finite number")(
        lambda t, v=_value: _diagnose(t, "--set", f"mte-share-high.threshold={v}")
    )
cli_case("config_threshold_nan", "option_value", 2, r"mte-share-high\.threshold=nan: expected a finite")(
    lambda t: _diagnose(t, "--config", str(a_file(t / "c.toml", "[mte-share-high]\nthreshold = nan\n")))
)
cli_case("set_threshold_text", "option_value", 2, r"mte-share-high\.threshold='high'")(
    lambda t: _diagnose(t, "--set", "mte-share-high.threshold='high'")
)
cli_case("diff_fail_on_regression_nan", "option_value", 2, r"--fail-on-regression nan")(
    lambda t: Run(["diff", str(export(t)), str(export(t)), "--fail-on-regression", "nan"])
)
cli_case("diff_fail_on_regression_negative", "option_value", 2, r"--fail-on-regression -5")(
    lambda t: Run(["diff", str(export(t)), str(export(t)), "--fail-on-regression", "-5"])
)
cli_case("batch_jobs_zero", "option_value", 2, r"--jobs must be at least 1")(
    lambda t: Run(["batch", str(export(t).parent), "--catalog", str(t / "c.duckdb"), "--jobs", "0"])
)
cli_case("diagnose_format_unknown", "option_value", 2, r"--format 'pdf'")(lambda t: _diagnose(t, "--format", "pdf"))

# ---- a file where a folder is expected -------------------------------------------------------------

cli_case("diagnose_readme_file", "file_for_folder", 2, r"README\.md: is a file that no reader takes")(
    lambda t: Run(["diagnose", str(a_file(_beside_export(t) / "README.md", "# notes\n")), "--out", str(t / "o")])
)
cli_case("ingest_unrelated_csv_file", "file_for_folder", 2, r"results\.csv: is a file that no reader takes")(
    lambda t: Run(["ingest", str(a_file(_beside_export(t) / "results.csv", "a,b\n1,2\n"))])
)


# a collection never exported (the export step skipped): the command that exports it, before any work
def _never_exported(tmp: Path, framework: bool, command: str = "diagnose") -> Run:
    root = tmp / "in" / ("host_1_20260101_ascend_pt" if framework else "")
    prof = root / "PROF_000001_20260101000000000_ABCDEFGHIJKLMNOP"
    (prof / "device_0" / "data").mkdir(parents=True)
    (prof / "device_0" / "data" / "ts_track.data.0.slice_0").write_bytes(b"\x01" * 64)
    if framework:
        (root / "FRAMEWORK").mkdir()
    if command == "batch":
        return Run(["batch", str(tmp / "in"), "--catalog", str(tmp / "c.duckdb"), "--jobs", "1"])
    return Run(["diagnose", str(tmp / "in"), "--out", str(tmp / "o")])


cli_case("batch_msprof_collection_never_exported", "no_export", 2, r"never exported.*msprof --export=on --output=")(
    lambda t: _never_exported(t, framework=False, command="batch")
)
cli_case("diagnose_msprof_collection_never_exported", "no_export", 2, r"never exported.*msprof --export=on --output=")(
    lambda t: _never_exported(t, framework=False)
)
cli_case("diagnose_torch_npu_collection_never_parsed", "no_export", 2, r"never exported.*analyse\(profiler_path=")(
    lambda t: _never_exported(t, framework=True)
)


def _diff_never_exported(tmp: Path) -> Run:
    """diff of a collection never exported (tmp/raw) against an export."""
    _never_exported(tmp / "raw", framework=False)
    return Run(["diff", str(tmp / "raw" / "in"), str(export(tmp))])


cli_case("diff_msprof_collection_never_exported", "no_export", 2, r"never exported.*msprof --export=on --output=")(
    _diff_never_exported
)


def _analysis_output(tmp: Path, beside_export: bool = False) -> Run:
    """msprof-analyze's cluster_analysis_output under tmp/in (its files as it names them), alone or beside an
    export (as msprof-analyze leaves it in the job folder it was given)."""
    out = tmp / "in" / "cluster_analysis_output"
    out.mkdir(parents=True)
    (out / "cluster_step_trace_time.csv").write_text("Step,Type,Index,Computing\n1,rank,0,100\n")
    (out / "cluster_communication.json").write_text("{}")
    sqlite_file(out / "cluster_analysis.db")
    if beside_export:
        export(tmp)
    return Run(["diagnose", str(tmp / "in"), "--out", str(tmp / "o")])


cli_case("diagnose_msprof_analyze_output", "no_export", 2, r"cluster_analysis_output is msprof-analyze's output")(
    _analysis_output
)
# the near miss: the same output left in a folder holding an export is not read, and the export is diagnosed
cli_case("diagnose_export_beside_msprof_analyze_output", "no_export", 0, r"wrote \d+ file")(
    lambda t: _analysis_output(t, beside_export=True)
)


def _summaries_only(tmp: Path, command: str) -> Run:
    """One rank's export holding its step summaries only (kernel_details and the timeline not exported)."""
    apo = export(tmp) / APO
    for name in ("kernel_details.csv", "trace_view.json", "op_statistic.csv", "api_statistic.csv"):
        (apo / name).unlink()
    if command == "ingest":
        return Run(["ingest", str(tmp / "in"), "--db", str(tmp / "o.duckdb")])
    return Run(["diagnose", str(tmp / "in"), "--out", str(tmp / "o")])


# read without a problem, yet no device task: the verdict says why (there are no "problems above" to point at)
cli_case("diagnose_summaries_only_rank", "no_export", 2, r"no device task could be read; the export holds none")(
    lambda t: _summaries_only(t, "diagnose")
)
cli_case("ingest_summaries_only_rank", "no_export", 2, r"no device task could be read; the export holds none")(
    lambda t: _summaries_only(t, "ingest")
)


# an archive of an export where an export belongs: what to do instead (batch reads archives), before any work
cli_case("diagnose_archive_file", "file_for_folder", 2, r"runs\.zip: is an archive.*npu-triage batch")(
    lambda t: Run(["diagnose", str(_zip(t)), "--out", str(t / "o")])
)
cli_case("ingest_archive_file", "file_for_folder", 2, r"runs\.zip: is an archive.*unpack it")(
    lambda t: Run(["ingest", str(_zip(t))])
)
cli_case("diagnose_one_kernel_details_file_reads_only_it", "file_for_folder", 0, r"wrote \d+ file")(
    lambda t: _diagnose_file(t, "kernel_details.csv", broken=("trace_view.json", "op_statistic.csv"))
)
cli_case("diagnose_one_trace_file_reads_only_it", "file_for_folder", 0, r"wrote \d+ file")(
    lambda t: _diagnose_file(t, "trace_view.json", broken=("kernel_details.csv", "api_statistic.csv"))
)


def _beside_export(tmp: Path) -> Path:
    """tmp/in holding an export and, beside it, whatever the case adds."""
    export(tmp)
    return tmp / "in"


def _diagnose_file(tmp: Path, name: str, broken: tuple[str, ...]) -> Run:
    """Diagnose one file of an export whose other files are ``broken``: they must not be read (exit 0)."""
    apo = export(tmp) / APO
    for other in broken:
        (apo / other).write_bytes(b"\x00garbage" * 50)
    return Run(["diagnose", str(apo / name), "--out", str(tmp / "out"), "--format", "json"])


def zip_bytes(entries: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a duplicate name is what some cases want
        for name, data in entries:
            zf.writestr(name, data)
    return buf.getvalue()


# ---- one bad item in a tree --------------------------------------------------------------------------


def tree(tmp: Path, bad: Callable[[Path], None]) -> Path:
    """tmp/in holding a good export under good/ and another under bad/, which ``bad`` spoils."""
    for name in ("good", "bad"):
        (tmp / "in" / name).mkdir(parents=True)
        base.write_torch_text(tmp / "in" / name)
    bad(tmp / "in" / "bad")
    return tmp / "in"


def non_utf8_name(folder: Path) -> None:
    folder.rename(Path(os.fsdecode(os.fsencode(str(folder)) + b"\xff")))


def symlink_loop_inside(folder: Path) -> None:
    (folder / "loop").symlink_to(folder, target_is_directory=True)
    (folder.parent / "self").symlink_to("self")


def metadata(values: dict, file: str = "profiler_metadata.json") -> Callable[[Path], None]:
    def write(folder: Path) -> None:
        (folder / TORCH_ROOT / file).write_text(json.dumps(values) if isinstance(values, dict) else values)

    return write


def _tree_commands(tmp: Path, root: Path, command: str) -> Run:
    if command == "batch":
        return Run(["batch", str(root), "--catalog", str(tmp / "c.duckdb"), "--jobs", "1", "--no-diagnose"])
    if command == "ingest":
        return Run(["ingest", str(root)])
    return Run(["diagnose", str(root), "--out", str(tmp / "out"), "--format", "json"])


for _command in ("diagnose", "ingest", "batch"):
    # read through a UTF-8 alias outside the input (issue 45), named as itself: nothing lost
    cli_case(f"{_command}_tree_non_utf8_folder_name", "tree_item", 0)(
        lambda t, c=_command: _tree_commands(t, tree(t, non_utf8_name), c)
    )
    cli_case(f"{_command}_tree_symlink_loop_inside", "tree_item", 0)(
        lambda t, c=_command: _tree_commands(t, tree(t, symlink_loop_inside), c)
    )
    cli_case(f"{_command}_symlink_loop_as_path", "tree_item", 2, r"a symbolic link that leads nowhere")(
        lambda t, c=_command: _tree_commands(t, _loop(t), c)
    )
    for _key, _value, _code in (
        ("batch_size", "abc", 3),
        ("batch_size", "1e999", 3),
        ("batch_size", {"n": 32}, 3),
        ("batch_size", 2**40, 3),
        ("model_name", ["resnet"], 3),
    ):
        _name = f"{_command}_metadata_{_key}_{type(_value).__name__}_{str(_value)[:5]}".replace(" ", "")
        cli_case(re.sub(r"[^a-z0-9_]", "", _name), "tree_item", _code, rf"profiler_metadata\.json.*{_key} is ")(
            lambda t, c=_command, k=_key, v=_value: _tree_commands(t, tree(t, metadata({k: v})), c)
        )

cli_case("diagnose_metadata_batch_size_float_text_is_taken", "tree_item", 0)(
    lambda t: _tree_commands(t, tree(t, metadata({"batch_size": "32.0"})), "diagnose")
)
cli_case("batch_metadata_batch_size_1e999_literal", "tree_item", 3, r"batch_size is Infinity")(
    lambda t: _tree_commands(t, tree(t, metadata('{"batch_size": 1e999}')), "batch")
)
cli_case("ingest_metadata_not_an_object", "tree_item", 0, r"")(
    lambda t: _tree_commands(t, tree(t, metadata("[1, 2, 3]")), "ingest")
)
cli_case("diagnose_msprof_ai_core_num_out_of_range", "tree_item", 3, r"info\.json\.0.*ai_core_num is 99999999999")(
    lambda t: _msprof_cores(t, 99999999999)
)
cli_case("diagnose_msprof_ai_core_num_text", "tree_item", 3, r"info\.json\.0.*ai_core_num is \"many\"")(
    lambda t: _msprof_cores(t, "many")
)


def _msprof_cores(tmp: Path, cores) -> Run:
    (tmp / "in").mkdir()
    root = base.write_msprof_text(tmp / "in")
    info = {"platform_version": "Ascend910B", "DeviceInfo": [{"id": 0, "ai_core_num": cores}]}
    (root / "device_0" / "info.json.0").write_text(json.dumps(info))
    return Run(["diagnose", str(root), "--out", str(tmp / "out"), "--format", "json"])


def _loop(tmp: Path) -> Path:
    (tmp / "in").mkdir()
    loop = tmp / "in" / "loop"
    loop.symlink_to("loop")
    return loop


# ---- archives -------------------------------------------------------------------------------------------


def export_entries(tmp: Path, prefix: str = "") -> list[tuple[str, bytes]]:
    """The files of the base export, as (entry name, bytes), under ``prefix``."""
    stage = tmp / "stage"
    root = base.write_torch_text(stage)
    files = [(prefix + p.relative_to(stage).as_posix(), p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file()]
    import shutil

    shutil.rmtree(stage)
    return files


def archive_batch(tmp: Path, data: bytes, name: str = "runs.zip", *extra: str, env: dict | None = None) -> Run:
    (tmp / "in").mkdir(exist_ok=True)
    (tmp / "in" / name).write_bytes(data)
    argv = ["batch", str(tmp / "in"), "--catalog", str(tmp / "c.duckdb"), "--jobs", "1", "--no-diagnose", *extra]
    return Run(argv, env or {})


def tar_bytes(entries: list[tuple[str, bytes | None]], mode: str = "w") -> bytes:
    """A tar of files (bytes) and folders (None)."""
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tf.addfile(info)
            else:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


BOMB = b"\0" * (24 << 20)  # 24 MiB of zeros: a few KiB deflated, far past 200 times that
TEMP = "npu-triage-batch-"
KD_IN = f"{TORCH_ROOT}/{APO}/kernel_details.csv"

cli_case("archive_zip_bomb_in_a_read_file", "archive", 2, r"runs\.zip: refused at entry .*kernel_details\.csv.*times")(
    lambda t: archive_batch(t, zip_bytes([(f"x/{KD_IN}", BOMB)]))
)
cli_case("archive_zip_bomb_beside_a_good_export", "archive", 0, r"runs\.zip: refused at entry")(
    lambda t: (export(t), archive_batch(t, zip_bytes([(f"bomb/{KD_IN}", BOMB)])))[1]
)
cli_case("archive_tgz_bomb", "archive", 2, r"runs\.tgz: refused at entry .*trace_view\.json")(
    lambda t: archive_batch(t, tar_bytes([(f"x/{TORCH_ROOT}/{APO}/trace_view.json", BOMB)], "w:gz"), "runs.tgz")
)
cli_case("archive_unused_big_file_is_skipped", "archive", 0, r"1 run\(s\) catalogued")(
    lambda t: archive_batch(t, zip_bytes(export_entries(t) + [(f"{TORCH_ROOT}/model.ckpt", BOMB)]))
)
cli_case("archive_total_limit_by_option", "archive", 2, r"runs\.zip: refused at entry .*passes 1\.0 KiB")(
    lambda t: archive_batch(t, zip_bytes(export_entries(t)), "runs.zip", "--max-unpacked", "1KiB")
)
cli_case("archive_total_limit_by_env", "archive", 2, r"runs\.zip: refused at entry .*passes 2\.0 KiB")(
    lambda t: archive_batch(t, zip_bytes(export_entries(t)), env={"NPU_TRIAGE_MAX_UNPACKED": "2KiB"})
)
cli_case("archive_limit_env_bogus", "archive", 2, r"NPU_TRIAGE_MAX_UNPACKED='lots': not a size")(
    lambda t: archive_batch(t, zip_bytes(export_entries(t)), env={"NPU_TRIAGE_MAX_UNPACKED": "lots"})
)
cli_case("archive_ratio_option_below_one", "archive", 2, r"--max-unpack-ratio='0\.5': not a number of 1 or more")(
    lambda t: archive_batch(t, zip_bytes(export_entries(t)), "runs.zip", "--max-unpack-ratio", "0.5")
)
cli_case("archive_ratio_option_nan", "archive", 2, r"--max-unpack-ratio='nan'")(
    lambda t: archive_batch(t, zip_bytes(export_entries(t)), "runs.zip", "--max-unpack-ratio", "nan")
)
cli_case("archive_zip_file_and_folder_of_one_name", "archive", 0, r"kernel_details\.csv is a file in the archive")(
    lambda t: archive_batch(t, zip_bytes(export_entries(t) + [(f"{KD_IN}/trace_view.json", b"[]")]))
)
cli_case("archive_zip_same_name_twice", "archive", 0, r"kernel_details\.csv \(a second entry of the same name\)")(
    lambda t: archive_batch(t, zip_bytes(export_entries(t) + [(KD_IN, b"Name\n")]))
)
cli_case("archive_tar_folder_then_file_of_one_name", "archive", 0, r"op_statistic\.csv \(a folder of the same name")(
    lambda t: archive_batch(
        t,
        tar_bytes([(f"{TORCH_ROOT}/{APO}/op_statistic.csv/kernel_details.csv", b"x")] + export_entries(t)),
        "runs.tar",
    )
)
cli_case(
    "archive_zip_bad_crc_names_the_entry", "archive", 2, r"runs\.zip: could not be read at entry '.*kernel_details"
)(lambda t: archive_batch(t, _bad_crc(zip_bytes(export_entries(t)))))
cli_case("archive_tgz_truncated", "archive", 2, r"runs\.tgz: could not be read")(
    lambda t: archive_batch(t, tar_bytes(export_entries(t), "w:gz")[:700], "runs.tgz")
)


def _bad_crc(data: bytes) -> bytes:
    """The zip with one byte of kernel_details.csv's stored data changed (its CRC no longer matches)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        info = zf.getinfo(KD_IN)
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    pos = start + info.compress_size // 2
    return data[:pos] + bytes([data[pos] ^ 0xFF]) + data[pos + 1 :]


# ---- strings from an export that would be markup -----------------------------------------------------

MARKUP = [
    "<script>alert('kd')</script>",
    "<svg onload=alert(1)>",
    "a|b|c",
    "`code` and ``more``",
    "[click](javascript:alert(1))",
    "<img src=x onerror=alert(2)>",
    "back\\slash|pipe",
    "<!-- comment",
]


def hostile_names(tmp: Path) -> Path:
    """The base export with every op name and type replaced by a string that would be markup."""
    from tests.malformed.base_exports import csv_cell

    root = export(tmp)
    header = base.KD_HEADER.split(",")
    rows = [base.kd_row(i, *op) for i, op in enumerate(base.OPS)]
    for i, row in enumerate(rows):
        row[header.index("Name")] = csv_cell(MARKUP[i % len(MARKUP)])
        row[header.index("Type")] = csv_cell(MARKUP[(i + 3) % len(MARKUP)])
    (root / APO / "kernel_details.csv").write_text(base.kernel_details_text(rows))
    return root


cli_case("markdown_hostile_op_names_and_types", "markup", 0, r"wrote \d+ file")(
    lambda t: Run(["diagnose", str(hostile_names(t)), "--out", str(t / "out"), "--format", "md,json"])
)

# ---- rule SQL that reaches outside the loaded tables (--rules) -----------------------------------------

RULE = '''schema_version = 1

[rule]
id = "SCH990"
name = "outside-reach"
title = "A user rule reaching outside the tables"
category = "scheduling"
severity = "warning"
status = "stable"
since = "0.1.0"
scope = "run"
requires = {{ ops = ["op_type", "dur_us"] }}

[doc]
checks = "Reads or writes outside the loaded tables."
why = "It must not be able to."
impact = "None."

[impact]
family = "operator-time"

[params]
min_total_us = 0.0

[query]
sql = """
{sql}
"""

[finding]
metric = "op_type_time"
unit = "us"
polarity = "lower_is_better"
message = "{{subject}}"

[advice]
summary = "None."
steps = ["None."]
'''
SECRET = "npu-triage-secret-6502"


def rule_run(tmp: Path, sql: str) -> Run:
    """diagnose with a --rules folder holding one rule of ``sql`` ({secret} and {out} are filled in)."""
    (tmp / "secret.txt").write_text(SECRET)
    folder = tmp / "myrules" / "scheduling"
    folder.mkdir(parents=True)
    filled = sql.format(secret=tmp / "secret.txt", out=tmp / "pwned.csv")
    (folder / "outside-reach.toml").write_text(RULE.format(sql=filled))
    root = export(tmp)
    argv = ["diagnose", str(root), "--out", str(tmp / "out"), "--format", "json,md", "--rules", str(tmp / "myrules")]
    return Run(argv)


RULE_SQL = {
    "read_text": "SELECT $run_id AS run_id, content AS subject, 1.0 AS value, 1.0 AS impact_us "
    "FROM read_text('{secret}') WHERE $min_total_us >= 0 ORDER BY subject, value",
    "read_csv": "SELECT $run_id AS run_id, column0 AS subject, 1.0 AS value, 1.0 AS impact_us "
    "FROM read_csv('{secret}', header = false) WHERE $min_total_us >= 0 ORDER BY subject, value",
    "copy_to": "COPY (SELECT op_name FROM ops) TO '{out}'; SELECT $run_id AS run_id, 'x' AS subject, 1.0 AS value, "
    "1.0 AS impact_us WHERE $min_total_us >= 0 ORDER BY subject, value",
    "attach": "ATTACH '{out}' AS evil; SELECT $run_id AS run_id, 'x' AS subject, 1.0 AS value, "
    "1.0 AS impact_us WHERE $min_total_us >= 0 ORDER BY subject, value",
    "glob": "SELECT $run_id AS run_id, file AS subject, 1.0 AS value, 1.0 AS impact_us FROM glob('{secret}') "
    "WHERE $min_total_us >= 0 ORDER BY subject, value",
}
for _name, _sql in RULE_SQL.items():
    cli_case(f"rule_sql_{_name}", "rule_sql", 0, "")(lambda t, s=_sql: rule_run(t, s))

cli_case("diff_catalog_side_is_sqlite", "database_file", 2, r"c\.db: is not an npu-triage catalog \(not a DuckDB")(
    lambda t: Run(["diff", f"{sqlite_file(t / 'c.db')}:run", str(export(t))])
)
cli_case("sweep_catalog_is_sqlite", "database_file", 2, r"c\.db: is not an npu-triage catalog \(not a DuckDB")(
    lambda t: Run(["sweep", "--catalog", str(sqlite_file(t / "c.db"))])
)
