"""Every rule file loads, validates, has fires/ and silent/; every fixture folder names a rule."""

from __future__ import annotations

import pytest

from analyzer.rule_engine.loader import RuleFileError, load_rule, load_rules
from analyzer.rule_engine.validation import validate_rule, validate_rules
from tests.rule_cases import FIXTURES_DIR, RULES, RULES_DIR


def test_rule_files_all_valid_no_problems():
    assert validate_rules(list(RULES.values())) == {}


def test_rule_files_template_is_valid_apart_from_location():
    problems = validate_rule(load_rule(RULES_DIR / "TEMPLATE.toml"))
    assert [p for p in problems if "stem" not in p and "folder" not in p] == []


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_files_each_rule_has_fires_and_silent(name):
    assert (FIXTURES_DIR / name / "fires").is_dir(), f"{name}: fixtures/rules/{name}/fires/ is missing"
    assert (FIXTURES_DIR / name / "silent").is_dir(), f"{name}: fixtures/rules/{name}/silent/ is missing"


def test_rule_files_every_fixture_folder_names_a_rule():
    orphans = [p.name for p in FIXTURES_DIR.iterdir() if p.is_dir() and p.name not in RULES]
    assert orphans == []


def test_rule_files_duplicate_id_is_reported():
    first, second = list(RULES.values())[:2]
    clone = second.__class__(**{**second.__dict__, "id": first.id})
    problems = validate_rules([first, clone])
    assert any("used by another rule" in p for ps in problems.values() for p in ps)


@pytest.mark.parametrize("name", sorted(RULES))
def test_rule_files_each_builtin_rule_declares_its_impact_family(name):
    assert RULES[name].impact_family, f"{name}: add [impact] family = ... (device-idle, operator-time or none)"


def test_rule_files_rewritten_in_place_are_read_again(tmp_path):
    """load_rules parses a folder once per content: a file rewritten at once (same size, and possibly the
    same modification time) gives the new rule, not the parsed old one."""
    path = tmp_path / "rules" / "compute" / "one.toml"
    path.parent.mkdir(parents=True)
    text = sorted((RULES_DIR / "compute").glob("*.toml"))[0].read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    first = load_rules(tmp_path / "rules")
    assert load_rules(tmp_path / "rules") == first
    old = first[0].title[0]
    new = "Y" if old != "Y" else "Z"
    path.write_text(text.replace(f'title = "{old}', f'title = "{new}', 1), encoding="utf-8")
    assert load_rules(tmp_path / "rules")[0].title == new + first[0].title[1:]


def test_rule_files_not_utf8_is_a_rule_file_error_naming_the_file(tmp_path):
    bad = tmp_path / "rules" / "compute" / "bad.toml"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b'title = "\xff"\n')
    with pytest.raises(RuleFileError, match=r"bad\.toml: not valid TOML"):
        load_rules(tmp_path / "rules")
