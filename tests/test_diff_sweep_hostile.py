"""diff and sweep on hostile inputs (issue 45): a run without steps against one with steps, a catalog run
against itself, a DuckDB file that is no catalog, sweep labels that are no batch size."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from analyzer.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "fixtures" / "examples" / "resnet_host_sync"
SWEEP_RUN = next((ROOT / "fixtures" / "examples" / "batch_sweep").glob("resnet50_bs1_*_ascend_pt"))


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_diff_of_a_run_without_steps_compares_whole_runs_not_a_step_against_a_run(tmp_path):
    from fixtures.generator import write_export

    (steps,) = write_export("healthy", tmp_path / "t", layout="torch_npu", seed=91, steps=5)
    (whole,) = write_export("healthy", tmp_path / "m", layout="msprof", seed=91, steps=5)  # no step markers
    out = tmp_path / "d.json"
    main(["diff", str(steps), str(whole), "--force", "--json", str(out), "--fail-on-regression", "5"])
    d = json.loads(out.read_text())
    assert d["step_basis"] == "span"
    # the same work on both sides: no op type 5x slower (a step of one run against the whole other);
    # one whole-run sample per side is not judged (docs/diff.md)
    assert {t["status"] for t in d["types"]} == {"no noise estimate"}
    assert all(abs(t["shift"]["rel_change"] or 0) < 0.05 for t in d["types"])
    assert [r for r in d["regressions"]["found"] if not r.startswith("step time")] == []


@pytest.mark.slow
def test_diff_of_a_catalog_run_with_itself_loads_it_once(tmp_path):
    catalog = tmp_path / "c.duckdb"
    assert main(["batch", str(EXAMPLE), "--catalog", str(catalog), "--jobs", "1"]) == 0
    (run,) = duckdb.connect(str(catalog), read_only=True).execute("SELECT run_id FROM catalog_runs").fetchall()[0]
    out = tmp_path / "d.json"
    spec = f"{catalog}:{run}"
    assert main(["diff", spec, spec, "--json", str(out), "--fail-on-regression", "1"]) == 0
    d = json.loads(out.read_text())
    assert d["step"]["rel_change"] == 0 and d["step"]["n_base"] == d["step"]["n_new"]
    assert {t["status"] for t in d["types"]} == {"unchanged"}


def test_diff_and_sweep_on_a_duckdb_file_that_is_no_catalog_say_so(tmp_path, capsys):
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).execute("CREATE TABLE x (a INTEGER)").close()
    assert main(["diff", f"{other}:r", f"{other}:r"]) == 2
    assert main(["sweep", "--catalog", str(other)]) == 2
    err = capsys.readouterr().err
    assert err.count("is a DuckDB file but not an npu-triage catalog (no catalog_runs table)") == 2
    assert "internal error" not in err


@pytest.mark.parametrize(
    ("labels", "says"),
    [
        (["bs=0"], "bs='0' is not a batch size"),
        (["bs=abc"], "bs='abc' is not a batch size"),
        (["bs=12345678901234567890123"], "is not a batch size (a whole number from 1 to 2147483647)"),
        (["bs=1", "bs=2", "bs=4"], "is labelled with 3 batch sizes (bs=1, bs=2, bs=4)"),
    ],
)
def test_sweep_labels_that_are_no_batch_size_are_refused_before_any_work(tmp_path, capsys, labels, says):
    html = tmp_path / "sweep.html"
    assert main(["sweep", *(f"{SWEEP_RUN}:{label}" for label in labels), "--html", str(html)]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and "no such file" not in err
    assert not html.exists()
