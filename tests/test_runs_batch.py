"""The batch catalog: archives, failures, incremental reruns, and a crash part-way that a rerun completes."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import duckdb
import pytest

from analyzer.cli import main
from analyzer.runs.archives import unpack
from analyzer.runs.catalog_schema import CATALOG_TABLES
from tests.tiny_exports import write_tiny_export


def _zip_folder(zip_path: Path, folder: Path) -> None:
    with zipfile.ZipFile(zip_path, "w") as zf:
        for p in sorted(folder.rglob("*")):
            zf.write(p, p.relative_to(folder.parent).as_posix())


def _tree(tmp_path: Path, n: int = 12) -> Path:
    """n runs: most as folders, two zipped, two in a .tgz, plus one corrupt zip."""
    root = tmp_path / "archive"
    staging = tmp_path / "staging"
    root.mkdir()
    for i in range(n):
        target = (root if i < n - 4 else staging) / f"group{i % 3}" / f"run_{i:02d}"
        write_tiny_export(target, seed=i, steps=3)
    for i in (n - 4, n - 3):
        _zip_folder(root / f"zipped_{i:02d}.zip", staging / f"group{i % 3}" / f"run_{i:02d}")
    with tarfile.open(root / "more.tgz", "w:gz") as tf:
        for i in (n - 2, n - 1):
            tf.add(staging / f"group{i % 3}" / f"run_{i:02d}", arcname=f"run_{i:02d}")
    (root / "corrupt.zip").write_bytes(b"PK\x03\x04 this is not really a zip")
    return root


def _dump(catalog: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in CATALOG_TABLES}
    finally:
        con.close()


@pytest.mark.slow
def test_batch_tree_with_archives_catalogs_every_run_and_the_corrupt_archive(tmp_path, capsys):
    root = _tree(tmp_path)
    catalog = tmp_path / "cat.duckdb"
    assert main(["batch", str(root), "--catalog", str(catalog), "--jobs", "2", "--no-diagnose"]) == 0
    tables = _dump(catalog)
    paths = sorted(r[1] for r in tables["catalog_runs"])
    assert len(paths) == 12
    assert "more.tgz!/run_10" in paths and "zipped_08.zip!/run_08" in paths
    assert [r[0] for r in tables["failures"]] == ["corrupt.zip"]
    assert len(tables["run_metrics"]) == 12
    assert "corrupt.zip" in capsys.readouterr().err


@pytest.mark.slow
def test_the_summary_counts_the_runs_a_two_device_export_gives_the_catalog(tmp_path, capsys):
    """An msprof export of two devices is two runs of the catalog: the first line says so beside the exports'
    count, and the counts match catalog_runs; the near miss, exports of one device each, keeps the plain count."""
    from fixtures.generator import write_export

    root = tmp_path / "in"
    write_export("comm_not_overlapped", root / "two", seed=7, layout="msprof")
    write_tiny_export(root / "one", seed=1, steps=3)
    catalog = tmp_path / "cat.duckdb"
    assert main(["batch", str(root), "--catalog", str(catalog), "--jobs", "1", "--no-diagnose"]) == 0
    assert capsys.readouterr().out.startswith("2 export(s) catalogued as 3 runs (a run per device), 0 already")
    assert len(_dump(catalog)["catalog_runs"]) == 3
    assert main(["batch", str(root / "one"), "--catalog", str(tmp_path / "one.duckdb"), "--no-diagnose"]) == 0
    assert capsys.readouterr().out.startswith("1 run(s) catalogued, 0 already")


@pytest.mark.slow
def test_batch_rerun_skips_every_known_run(tmp_path, capsys):
    root = _tree(tmp_path, n=6)
    catalog = tmp_path / "cat.duckdb"
    assert main(["batch", str(root), "--catalog", str(catalog), "--jobs", "1", "--no-diagnose"]) == 0
    first = _dump(catalog)
    capsys.readouterr()
    assert main(["batch", str(root), "--catalog", str(catalog), "--jobs", "1", "--no-diagnose"]) == 0
    assert "0 run(s) catalogued, 6 already in the catalog" in capsys.readouterr().out
    assert _dump(catalog) == first


@pytest.mark.slow
def test_batch_killed_part_way_then_rerun_equals_uninterrupted_run(tmp_path):
    # 8 runs (folders, zipped and in a .tgz, as in every tree): the kill at the 3rd commit leaves 5 to the rerun
    root = _tree(tmp_path, n=8)
    whole, killed = tmp_path / "whole.duckdb", tmp_path / "killed.duckdb"
    assert main(["batch", str(root), "--catalog", str(whole), "--jobs", "1", "--no-diagnose"]) == 0
    cmd = [
        sys.executable,
        "-m",
        "analyzer",
        "batch",
        str(root),
        "--catalog",
        str(killed),
        "--jobs",
        "1",
        "--verbose",
        "--no-diagnose",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    committed = 0
    for line in proc.stdout:
        committed += line.startswith("catalogued:")
        if committed == 3:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait()
    assert committed == 3 and proc.returncode == -signal.SIGKILL
    assert 3 <= len(_dump(killed)["catalog_runs"]) < 8
    assert main(["batch", str(root), "--catalog", str(killed), "--jobs", "1", "--no-diagnose"]) == 0
    assert _dump(killed) == _dump(whole)


def test_batch_nothing_usable_exits_2(tmp_path):
    (tmp_path / "bad.zip").write_bytes(b"junk")
    assert main(["batch", str(tmp_path), "--catalog", str(tmp_path / "c.duckdb")]) == 2


def test_unpack_zip_entries_escaping_the_folder_are_refused(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ok/kernel_details.csv", "fine")
        zf.writestr("../escaped.txt", "bad")
        zf.writestr("/abs.txt", "bad")
    dest = tmp_path / "out"
    result = unpack(archive, dest)
    assert (dest / "ok" / "kernel_details.csv").read_text() == "fine"
    assert not (tmp_path / "escaped.txt").exists()
    assert len(result.refused) == 2 and "climbs out" in result.refused[0]


def test_unpack_tar_links_pointing_out_are_refused(tmp_path):
    archive = tmp_path / "evil.tar"
    with tarfile.open(archive, "w") as tf:
        data = b"fine"
        info = tarfile.TarInfo("kernel_details.csv")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("passwd")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(link)
        hard = tarfile.TarInfo("hard")
        hard.type, hard.linkname = tarfile.LNKTYPE, "../../outside"
        tf.addfile(hard)
    dest = tmp_path / "out"
    result = unpack(archive, dest)
    assert (dest / "kernel_details.csv").read_bytes() == b"fine"
    assert not (dest / "passwd").exists() and not (dest / "hard").exists()
    assert [r.split(" ")[0] for r in result.refused] == ["passwd", "hard"]


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_query_catalog_is_read_only(tmp_path, capsys):
    root = _tree(tmp_path, n=4)
    catalog = tmp_path / "cat.duckdb"
    assert main(["batch", str(root), "--catalog", str(catalog), "--jobs", "1", "--no-diagnose"]) == 0
    capsys.readouterr()
    assert main(["query", str(catalog), "SELECT count(*) AS n FROM catalog_runs", "--format", "csv"]) == 0
    assert capsys.readouterr().out == "n\n4\n"
    assert main(["query", str(catalog), "DELETE FROM catalog_runs"]) == 2
    assert main(["export", str(catalog), "--parquet", str(tmp_path / "pq")]) == 0
    assert (tmp_path / "pq" / "catalog_runs.parquet").is_file()


@pytest.mark.parametrize("archive_name", ["runs.zip"])
@pytest.mark.slow
def test_batch_single_archive_as_root_labels_inside_paths(tmp_path, archive_name):
    staging = tmp_path / "s"
    write_tiny_export(staging / "run_a", seed=1, steps=2)
    _zip_folder(tmp_path / archive_name, staging / "run_a")
    catalog = tmp_path / "cat.duckdb"
    args = ["batch", str(tmp_path / archive_name), "--catalog", str(catalog), "--jobs", "1", "--no-diagnose"]
    assert main(args) == 0
    assert [r[1] for r in _dump(catalog)["catalog_runs"]] == ["runs.zip!/run_a"]


def test_catalog_docs_page_is_generated_from_the_schema():
    from analyzer.report.catalog_doc import render_catalog_markdown

    page = Path(__file__).resolve().parents[1] / "docs" / "catalog.md"
    regenerate = "regenerate: npu-triage runs --schema-markdown > docs/catalog.md"
    assert page.read_text() == render_catalog_markdown(), regenerate


@pytest.mark.slow
def test_batch_with_diagnosis_catalogs_findings_and_runs_lists_the_top_one(tmp_path, capsys):
    generator = pytest.importorskip("fixtures.generator", reason="the fixture generator has not landed yet")
    pytest.importorskip("analyzer.diagnosis", reason="the diagnosis module has not landed yet")
    generator.write_export("host_sync_low_util", tmp_path / "runs", seed=0)
    catalog = tmp_path / "cat.duckdb"
    assert main(["batch", str(tmp_path / "runs"), "--catalog", str(catalog), "--jobs", "1"]) == 0
    findings = _dump(catalog)["findings"]
    assert findings and min(r[1] for r in findings) == 1
    capsys.readouterr()
    assert main(["runs", str(catalog)]) == 0
    top = [r for r in findings if r[1] == 1][0]
    assert top[2] in capsys.readouterr().out


@pytest.fixture(scope="module")
def three_run_catalog(tmp_path_factory) -> tuple[Path, list[str]]:
    """A catalog of three tiny runs with long names (built once: each format only lists it), and its run ids."""
    tmp_path = tmp_path_factory.mktemp("three_runs")
    for i in range(3):
        write_tiny_export(tmp_path / "runs" / f"a_rather_long_experiment_name_for_run_{i:02d}", seed=i, steps=3)
    catalog = tmp_path / "cat.duckdb"
    assert main(["batch", str(tmp_path / "runs"), "--catalog", str(catalog), "--jobs", "1", "--no-diagnose"]) == 0
    con = duckdb.connect(str(catalog), read_only=True)
    ids = [r[0] for r in con.execute("SELECT run_id FROM catalog_runs").fetchall()]
    con.close()
    return catalog, ids


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["auto", "tsv", "csv", "json"])
def test_runs_into_a_pipe_lists_full_run_ids_in_a_parsable_format(three_run_catalog, capsys, fmt):
    import csv
    import json

    catalog, ids = three_run_catalog
    capsys.readouterr()
    assert main(["runs", str(catalog), "--format", fmt]) == 0
    text = capsys.readouterr().out
    if fmt == "json":
        listed = [r["run_id"] for r in json.loads(text)]
    else:
        rows = list(csv.DictReader(text.splitlines(), delimiter="," if fmt == "csv" else "\t"))
        listed = [r["run_id"] for r in rows]
    assert sorted(listed) == sorted(ids) and len(ids) == 3
    assert (
        all(len(line.split("\t")) == len(text.splitlines()[0].split("\t")) for line in text.splitlines())
        or fmt != "tsv"
    )


@pytest.mark.slow
def test_second_batch_on_a_catalog_being_written_is_refused_naming_the_first(tmp_path, capsys):
    # 6 runs: the second batch is refused right after the first one's first commit, with 5 runs still to do
    root = _tree(tmp_path, n=6)
    catalog = tmp_path / "cat.duckdb"
    cmd = [sys.executable, "-m", "analyzer", "batch", str(root), "--catalog", str(catalog), "--jobs", "1"]
    first = subprocess.Popen([*cmd, "--verbose", "--no-diagnose"], stdout=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline().startswith("catalogued:")  # it holds the catalog now
        assert main(["batch", str(root), "--catalog", str(catalog), "--jobs", "1", "--no-diagnose"]) == 2
        assert f"in use by another process (PID {first.pid})" in capsys.readouterr().err
        first.stdout.read()
        assert first.wait(120) == 0
    finally:
        first.kill()
        first.wait()
    assert len(_dump(catalog)["catalog_runs"]) == 6


def test_batch_executor_that_cannot_start_leaves_no_new_catalog(tmp_path, capsys):
    write_tiny_export(tmp_path / "tree" / "run_a_ascend_pt")
    catalog = tmp_path / "new.duckdb"
    assert main(["batch", str(tmp_path / "tree"), "--catalog", str(catalog), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "--scheduler needs --executor dask" in capsys.readouterr().err
    assert list(tmp_path.glob("new.duckdb*")) == []


def test_batch_wrong_catalog_is_refused_before_the_executor_starts(tmp_path, capsys):
    write_tiny_export(tmp_path / "tree" / "run_a_ascend_pt")
    catalog = tmp_path / "notes.duckdb"
    catalog.write_text("not a catalog\n")
    # The scheduler is never asked for: its address is unreachable, and the catalog is judged first.
    args = ["batch", str(tmp_path / "tree"), "--catalog", str(catalog), "--executor", "dask"]
    assert main([*args, "--scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "is not an npu-triage catalog" in capsys.readouterr().err
    assert catalog.read_text() == "not a catalog\n"
