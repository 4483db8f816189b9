"""--set and --config take a rule's code wherever they take its name (as `rules show` does)."""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main
from analyzer.rule_engine.loader import default_rules_dir, load_rules
from analyzer.rule_engine.params import ParamError, check_overrides
from tests.conftest import ROOT

RUN = ROOT / "fixtures" / "examples" / "resnet_host_sync"
RULES = load_rules(default_rules_dir())
MTE = next(r for r in RULES if r.id == "MEM001")


def _diagnose(tmp_path, name: str, *options: str) -> tuple[int, bytes]:
    code = main(["diagnose", str(RUN), "--out", str(tmp_path / name), "--format", "json", "--quiet", *options])
    (path,) = (tmp_path / name).glob("*/diagnosis.json")
    return code, path.read_bytes()


@pytest.mark.slow  # two whole diagnoses compared byte for byte
def test_set_with_a_rule_code_equals_set_with_its_name(tmp_path):
    assert MTE.params["threshold"] != 0.35
    by_code = _diagnose(tmp_path, "code", "--set", "MEM001.threshold=0.35")
    by_name = _diagnose(tmp_path, "name", "--set", f"{MTE.name}.threshold=0.35")
    assert by_code == by_name and by_code[0] == 0
    assert json.loads(by_code[1])["params"][MTE.name]["threshold"] == 0.35


@pytest.mark.slow
def test_code_and_name_in_config_and_set_merge_the_later_winning(tmp_path):
    config = tmp_path / "triage.toml"
    config.write_text("[MEM001]\nthreshold = 0.2\nmin_core_time_us = 7.0\n", encoding="utf-8")
    _, doc = _diagnose(tmp_path, "a", "--config", str(config), "--set", f"{MTE.name}.threshold=0.3")
    params = json.loads(doc)["params"][MTE.name]
    assert params["threshold"] == 0.3 and params["min_core_time_us"] == 7.0
    config.write_text(f"[{MTE.name}]\nthreshold = 0.2\n", encoding="utf-8")
    _, doc = _diagnose(tmp_path, "b", "--config", str(config), "--set", "MEM001.threshold=0.25")
    assert json.loads(doc)["params"][MTE.name]["threshold"] == 0.25


def test_unknown_code_and_bad_param_are_reported(tmp_path, capsys):
    assert main(["diagnose", str(RUN), "--out", str(tmp_path / "r"), "--set", "XYZ999.threshold=1"]) == 2
    assert "unknown rule 'XYZ999' (give a rule name or code)" in capsys.readouterr().err
    with pytest.raises(ParamError, match=f"rule '{MTE.name}' has no param 'nope'"):
        check_overrides({"MEM001": {"nope": 1}}, RULES)
    assert check_overrides({"MEM001": {"threshold": 0.5}}, RULES) == {MTE.name: {"threshold": 0.5}}
