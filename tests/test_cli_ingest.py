"""`npu-triage ingest` and `npu-triage schema` end to end, with the input-hash check after every command."""

from __future__ import annotations

import duckdb
import pytest

from analyzer.cli import main
from analyzer.report.schema_doc import render_schema_markdown
from tests.malformed.cases import by_name
from tests.tree_hash import tree_digest


def test_cli_ingest_real_tree_lists_each_run_and_leaves_inputs_identical(real_dir, tmp_path, capsys):
    before = tree_digest(real_dir)
    db = tmp_path / "all.duckdb"
    # exit 3: the level1 rank0/rank1 pair is a job of 8 ranks (rank 0's matrix sends to ranks 1-7), 6 absent
    assert main(["ingest", str(real_dir), "--db", str(db)]) == 3
    out = capsys.readouterr().out
    for run in (
        "torch_npu_level1_rank0_text",
        "torch_npu_level0_rank0_text",
        "torch_npu_arith_2023",
        "torch_npu_memoryl0_2023",
        "torch_npu_level1_rank0_db",
        "msprof_db_2023",
        "torch_npu_trace_2024",
    ):
        assert f"{run}: " in out
    assert "torch_npu_level1_rank0_text: torch_npu text" in out and "191 tasks" in out
    assert tree_digest(real_dir) == before


def test_cli_ingest_twice_is_idempotent(real_dir, tmp_path):
    db = tmp_path / "x.duckdb"
    export = str(real_dir / "torch_npu_level1_rank0_text")
    assert main(["ingest", export, "--db", str(db)]) == 0
    assert main(["ingest", export, "--db", str(db)]) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM ops").fetchone()[0] == 191
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1


def test_cli_ingest_parquet_writes_every_table(real_dir, tmp_path):
    out = tmp_path / "pq"
    assert main(["ingest", str(real_dir / "torch_npu_level1_rank0_text"), "--parquet", str(out)]) == 0
    assert duckdb.execute(f"SELECT count(*) FROM '{out}/ops.parquet'").fetchone()[0] == 191
    assert (out / "runs.parquet").exists() and not list(out.glob(".*"))


def test_cli_ingest_empty_folder_exits_2_with_message(tmp_path, capsys):
    assert main(["ingest", str(tmp_path)]) == 2
    assert "no Ascend profiling export found" in capsys.readouterr().err


def test_cli_ingest_folder_of_links_says_links_are_not_followed(tmp_path, capsys):
    """A folder of symbolic links to exports (a job assembled by hand) names the links it did not follow."""
    target = tmp_path / "exports" / "rank0_ascend_pt"
    (target / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "rank0_ascend_pt").symlink_to(target)
    assert main(["ingest", str(tmp_path / "job")]) == 2
    assert "symbolic links to folders are not followed (1 here, first: rank0_ascend_pt)" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_ingest_truncated_export_exits_3_unless_allow_partial(tmp_path, capsys):
    """Part of the input lost: the tables are written, and the exit code says they are partial."""
    export = by_name()["export_truncated_late"].build(tmp_path / "in")
    db = tmp_path / "runs.duckdb"
    assert main(["ingest", str(export), "--db", str(db)]) == 3
    err = capsys.readouterr().err
    assert "part of the input was lost" in err and "kernel_details.csv" in err and "--allow-partial" in err
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM ops").fetchall()[0][0] > 0
        assert con.execute("SELECT count(*) FROM ingest_problems WHERE severity = 'error'").fetchall()[0][0] > 0
    assert main(["ingest", str(export), "--db", str(db), "--allow-partial"]) == 0
    assert "part of the input was lost" not in capsys.readouterr().err


def test_cli_ingest_missing_path_exits_2(tmp_path, capsys):
    assert main(["ingest", str(tmp_path / "nope")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_cli_ingest_unreadable_kernel_details_exits_2_naming_the_file(tmp_path, capsys):
    apo = tmp_path / "r_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    apo.mkdir(parents=True)
    (apo / "kernel_details.csv").write_bytes(b"")
    assert main(["ingest", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "kernel_details.csv" in err and "empty file" in err and "nothing usable" in err


def test_cli_schema_prints_every_table(capsys):
    assert main(["schema"]) == 0
    out = capsys.readouterr().out
    for table in ("runs", "ops", "op_stats", "api_stats", "steps", "timeline", "counters", "comm_ops"):
        assert f"{table}: " in out
    assert "start_ns" in out and "BIGINT [ns]" in out


def test_schema_docs_page_is_generated_and_current():
    from tests.conftest import ROOT

    page = ROOT / "docs" / "schema.md"
    assert page.read_text() == render_schema_markdown(), "regenerate: npu-triage schema --markdown > docs/schema.md"
