"""`npu-triage accuracy`: reports, --profile, --fail-on, exit codes, and every malformed input named."""

from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest

from analyzer.accuracy.read.header_proto import DumpData
from analyzer.cli import main
from fixtures.dumps.generate import generate

# The whole command over generated inputs: in the full suite, not the fast loop.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dump_set(tmp_path_factory):
    out = tmp_path_factory.mktemp("acc")
    return out, generate(out, 4201, "channel", 8, 16)


def _native_dir(root):
    return next(p for p in (root / "dump" / "native").rglob("*") if p.is_file()).parent


def test_accuracy_cli_writes_reports_with_profile_times(dump_set, tmp_path, capsys):
    root, truth = dump_set
    args = [
        "accuracy",
        str(root / "dump" / "native"),
        str(root / "reference" / "npy"),
        "--profile",
        str(root / "profile"),
    ]
    assert main([*args, "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "native" / "accuracy.json").read_text())
    assert doc["findings"][0]["subject"] == truth["op_name"] and doc["counts"]["compared"] == 19
    culprit = next(o for o in doc["operators"] if o["op_name"] == truth["op_name"])
    assert culprit["device_time_us"] > 0 and culprit["launches"] == 3
    assert "| device us |" in (tmp_path / "native" / "accuracy.md").read_text()
    assert 'id="error-map-0"' in (tmp_path / "native" / "accuracy.html").read_text()
    assert main([*args, "--out", str(tmp_path), "--fail-on", "critical", "--format", "json"]) == 1
    assert "Traceback" not in capsys.readouterr().err


def test_accuracy_cli_user_mistakes_exit_2_before_any_work(dump_set, tmp_path, capsys):
    root, _ = dump_set
    assert main(["accuracy", str(tmp_path / "absent"), str(root / "reference" / "npy")]) == 2
    assert "DUMP" in capsys.readouterr().err
    inside = root / "dump" / "native" / "reports"
    assert main(["accuracy", str(root / "dump" / "native"), str(root / "reference" / "npy"), "--out", str(inside)]) == 2
    assert "inside" in capsys.readouterr().err and not inside.exists()


def _rewrite_header(path, change):
    blob = path.read_bytes()
    (length,) = struct.unpack("<Q", blob[:8])
    header = DumpData.FromString(blob[8 : 8 + length])
    change(header)
    head = header.SerializeToString()
    path.write_bytes(struct.pack("<Q", len(head)) + head + blob[8 + length :])


def _break(root):
    """One fault of each kind, each in its own file; returns (file name part, message part) pairs."""
    folder = _native_dir(root)
    files = {p.name.split(".")[1]: p for p in folder.iterdir()}
    files["add1"].write_bytes(struct.pack("<Q", 10**9) + files["add1"].read_bytes()[8:])
    _rewrite_header(files["relu1"], lambda h: setattr(h.output[0], "size", h.output[0].size - 2))
    _rewrite_header(files["relu2"], lambda h: setattr(h.output[0], "data_type", 39))
    _rewrite_header(files["mul1"], lambda h: setattr(h.input[0], "format", 99))
    _rewrite_header(files["conv1"], lambda h: h.output[0].original_shape.dim.__setitem__(1, 40))
    files["conv3"].write_bytes(files["conv3"].read_bytes()[:-100])
    os.symlink(root / "absent", folder / "Conv2D.conv9.9.2.1735689600009999")
    ref = next((root / "reference" / "npy").glob("Conv2D.conv2.*.output.0.npy"))
    np.save(ref, np.zeros((1, 8, 15, 16), np.float32))
    return [
        ("add1", "past the end of the file"), ("relu1", "disagrees with shape"), ("relu2", "data type code 39"),
        ("mul1", "format code 99"), ("conv1", "does not hold the original"), ("conv3", "past the file's"),
        ("conv9", "No such file"), ("conv2", "differs from the reference"),
    ]  # fmt: skip


def test_accuracy_cli_malformed_inputs_are_named_and_exit_3(tmp_path, capsys):
    generate(tmp_path, 4202, "drift", 8, 16)
    expected = _break(tmp_path)
    args = [
        "accuracy",
        str(tmp_path / "dump" / "native"),
        str(tmp_path / "reference" / "npy"),
        "--out",
        str(tmp_path / "o"),
    ]
    assert main([*args, "--format", "json"]) == 3
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error: ")]
    for name, problem in expected:
        assert any(f".{name}." in line and problem in line for line in errors), (name, errors)
    doc = json.loads((tmp_path / "o" / "native" / "accuracy.json").read_text())
    assert doc["counts"]["compared"] > 0 and len(doc["problems"]) == len(expected)
    assert main([*args, "--format", "json", "--allow-partial"]) == 0


def test_accuracy_cli_catalog_keeps_tables_and_findings_per_run(dump_set, tmp_path):
    from analyzer.runs.catalog import open_catalog

    root, truth = dump_set
    catalog = tmp_path / "c.duckdb"
    for _ in range(2):  # a rerun replaces the run's rows
        args = [str(root / "dump" / "native"), str(root / "reference" / "npy"), "--catalog", str(catalog)]
        assert main(["accuracy", *args, "--out", str(tmp_path / "o"), "--format", "json"]) == 0
    # another dump folder of the same name keeps its own rows under its own --run-id
    assert main(["accuracy", *args, "--out", str(tmp_path / "o"), "--format", "json", "--run-id", "day2/native"]) == 0
    assert (tmp_path / "o" / "day2" / "native" / "accuracy.json").is_file()
    assert main(["accuracy", *args, "--out", str(tmp_path / "o"), "--run-id", "./"]) == 2
    con = open_catalog(catalog, read_only=True)
    assert con.execute("SELECT run_id, code, subject FROM accuracy_findings ORDER BY run_id").fetchall() == [
        ("day2/native", "ACC001", truth["op_name"]), ("native", "ACC001", truth["op_name"])
    ]  # fmt: skip
    assert con.execute("SELECT run_id, count(*) FROM tensor_compare GROUP BY ALL ORDER BY 1").fetchall() == [
        ("day2/native", 19), ("native", 19)
    ]  # fmt: skip


def test_accuracy_cli_statistics_dump_alone_names_where_inf_appears(tmp_path):
    truth = generate(tmp_path, 4203, "overflow", 8, 16, profile=False)
    args = [str(tmp_path / "dump" / "stats"), str(tmp_path / "reference" / "npy"), "--out", str(tmp_path / "o")]
    assert main(["accuracy", *args, "--format", "json,md"]) == 0
    doc = json.loads((tmp_path / "o" / "stats" / "accuracy.json").read_text())
    assert doc["counts"]["compared"] == 0 and len(doc["stats"]) == 19
    assert doc["findings"][0]["subject"].startswith(f"{truth['op_name']} output 0")
    assert "## Statistics dump" in (tmp_path / "o" / "stats" / "accuracy.md").read_text()


def test_the_profiles_run_report_links_to_the_accuracy_report(dump_set, tmp_path, capsys):
    root, truth = dump_set
    dump, ref = str(root / "dump" / "native"), str(root / "reference" / "npy")
    assert main(["accuracy", dump, ref, "--profile", str(root / "profile"), "--out", str(tmp_path / "r")]) == 0
    assert main(["accuracy", dump, ref, "--out", str(tmp_path / "r" / "no-profile"), "--format", "json"]) == 0
    assert main(["diagnose", str(root / "profile"), "--out", str(tmp_path / "r"), "--format", "md,html"]) == 0
    [run] = [p for p in (tmp_path / "r").iterdir() if (p / "diagnosis.md").is_file()]
    md, page = (run / "diagnosis.md").read_text(), (run / "report.html").read_text()
    assert md.count("## Accuracy of dump/native against reference/npy") == 1  # the run without --profile: none
    assert "(<../native/accuracy.md>)" in md and f"{truth['op_name']}: An operator computes wrong" in md
    assert all(f"{op}: inherits the error of {truth['op_name']}" in md for op in truth["downstream"])
    assert '<a href="../native/accuracy.html">' in page and 'id="accuracy"' in page
    capsys.readouterr()
    assert main(["accuracy", dump, ref, "--profile", str(root / "profile"), "--out", str(tmp_path / "r")]) == 0
    assert f"{run} holds the run report of {run.name} from before" in capsys.readouterr().out
