"""The diagnose and rules commands on bad usage and on small exports built in tmp_path."""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main
from analyzer.report.plotly_asset import plotly_file_name
from analyzer.report.terminal import TSV_COLUMNS

KERNEL_DETAILS = (
    "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim\n"
    "1,MatMul_1,MatMulV2,AI_CORE,1000000.000,100.0,0,8\n"
    "1,Add_1,Add,AI_VECTOR_CORE,1001000.000,100.0,900,8\n"
)


def _export(tmp_path):
    folder = tmp_path / "tiny_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    folder.mkdir(parents=True)
    (folder / "kernel_details.csv").write_text(KERNEL_DETAILS, encoding="utf-8")
    return tmp_path / "tiny_ascend_pt"


def test_diagnose_cli_unknown_param_exits_2(tmp_path, capsys):
    code = main(
        [
            "diagnose",
            str(_export(tmp_path)),
            "--set",
            "mte-share-high.nope=1",
            "--out",
            str(tmp_path / "r"),
        ]
    )
    assert code == 2
    assert "no param 'nope'" in capsys.readouterr().err


def test_diagnose_cli_unknown_rule_in_config_exits_2(tmp_path, capsys):
    config = tmp_path / "triage.toml"
    config.write_text("[no-such-rule]\nthreshold = 1\n", encoding="utf-8")
    code = main(["diagnose", str(_export(tmp_path)), "--config", str(config), "--out", str(tmp_path / "r")])
    assert code == 2
    assert "unknown rule 'no-such-rule'" in capsys.readouterr().err


def test_diagnose_cli_missing_path_exits_2(tmp_path):
    assert main(["diagnose", str(tmp_path / "absent"), "--out", str(tmp_path / "r")]) == 2


@pytest.mark.slow
def test_diagnose_cli_tiny_export_writes_reports(tmp_path, capsys):
    export = _export(tmp_path)
    code = main(["diagnose", str(export), "--out", str(tmp_path / "r"), "--fail-on", "warning"])
    (run_folder,) = [p for p in (tmp_path / "r").iterdir() if p.is_dir()]
    assert code == 1  # 200 us busy of 1100 us: low utilisation
    assert sorted(p.name for p in run_folder.iterdir()) == ["diagnosis.json", "diagnosis.md", "report.html"]
    assert [p.name for p in (tmp_path / "r").glob("plotly-*.min.js")] == [plotly_file_name()]
    assert not any(p.name.startswith("reports") for p in export.rglob("*"))
    err = capsys.readouterr().err
    assert "--fail-on warning: tripped by tiny_ascend_pt: warning SCH001 inter-op-gap (whole run)" in err


@pytest.mark.slow
def test_diagnose_cli_into_a_pipe_prints_tsv_with_full_ids(tmp_path, capsys):
    export = _export(tmp_path)
    assert main(["diagnose", str(export), "--out", str(tmp_path / "r")]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split("\t") for line in lines]
    assert rows[0] == list(TSV_COLUMNS)
    assert rows[0][1] == "position" and [r[1] for r in rows[1:]] == ["1", "2"]  # ranking place, not a job rank
    assert len(rows) > 1 and all(len(r) == len(TSV_COLUMNS) for r in rows)
    assert {r[0] for r in rows[1:]} == {"tiny_ascend_pt"}
    assert [r[4] for r in rows[1:]] == ["inter-op-gap", "low-aicore-utilization"]


@pytest.mark.slow
def test_diagnose_cli_export_given_itself_names_its_folder(tmp_path):
    export = _export(tmp_path)
    assert main(["diagnose", str(export), "--out", str(tmp_path / "r"), "--format", "json,html", "--quiet"]) == 0
    (run_folder,) = [p for p in (tmp_path / "r").iterdir() if p.is_dir()]
    assert json.loads((run_folder / "diagnosis.json").read_text())["run"]["source_path"] == export.name
    assert f"<th>export folder</th><td>{export.name}</td>" in (run_folder / "report.html").read_text()


@pytest.mark.slow
def test_diagnose_cli_quiet_prints_nothing_on_stdout(tmp_path, capsys):
    export = _export(tmp_path)
    assert main(["diagnose", str(export), "--out", str(tmp_path / "r"), "--quiet"]) == 0
    assert capsys.readouterr().out == ""


@pytest.mark.slow
def test_rules_cli_check_builtin_rules_exit_0():
    assert main(["rules", "check"]) == 0


def test_rules_cli_check_broken_rule_exit_1(tmp_path, capsys):
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "bad-rule.toml").write_text('schema_version = 1\n[rule]\nid = "XYZ1"\n', encoding="utf-8")
    assert main(["rules", "check", "--rules", str(tmp_path)]) == 1
    assert "[title] is missing" in capsys.readouterr().out


def test_rules_cli_list_markdown_has_every_rule(capsys):
    assert main(["rules", "list", "--markdown"]) == 0
    text = capsys.readouterr().out
    for code in ("CMP001", "MEM001", "SCH001", "SCH002", "COM001"):
        assert code in text


def test_rules_cli_show_unknown_exits_2():
    assert main(["rules", "show", "no-such-rule"]) == 2


def test_rules_cli_check_names_a_file_that_is_not_toml_once(tmp_path, capsys):
    bad = tmp_path / "memory" / "bad-rule.toml"
    bad.parent.mkdir()
    bad.write_bytes(b'title = "\xff"\n[rule\n')
    assert main(["rules", "check", "--rules", str(tmp_path)]) == 1
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "bad-rule.toml" in x]
    assert line.startswith(f"{bad}: not valid TOML") and line.count("bad-rule.toml") == 1
