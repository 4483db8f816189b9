"""The diagnose and rules commands on bad usage and on small exports built in tmp_path."""

from __future__ import annotations

from analyzer.cli import main

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


def test_diagnose_cli_tiny_export_writes_reports(tmp_path):
    export = _export(tmp_path)
    code = main(["diagnose", str(export), "--out", str(tmp_path / "r"), "--fail-on", "warning"])
    run_folder = next((tmp_path / "r").iterdir())
    assert code == 1  # 200 us busy of 1100 us: low utilisation
    assert sorted(p.name for p in run_folder.iterdir()) == ["diagnosis.json", "diagnosis.md", "report.html"]
    assert not any(p.name.startswith("reports") for p in export.rglob("*"))


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
