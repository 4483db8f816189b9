"""Rules read public helpers only: `rules check` refuses a rule reading an @internal one; docs list the public ones."""

from __future__ import annotations

import shutil

from analyzer.cli import main
from analyzer.report.rules_doc import render_rules_reference
from analyzer.rule_engine.views import helper_definitions
from tests.rule_cases import RULES, RULES_DIR


def _copy_rule(tmp_path, name: str, old: str, new: str):
    """A rules folder holding one built-in rule with ``old`` replaced by ``new`` in its SQL."""
    source = RULES[name]
    folder = tmp_path / source.category
    folder.mkdir()
    target = folder / f"{name}.toml"
    shutil.copyfile(source.path, target)
    text = target.read_text(encoding="utf-8")
    assert old in text
    target.write_text(text.replace(old, new, 1), encoding="utf-8")
    return target


def test_rules_check_rule_reading_an_internal_helper_is_refused(tmp_path, capsys) -> None:
    # inter-op-gap reads _time_shares (public); the same rule over _time_parts (its internal step) is refused
    target = _copy_rule(tmp_path, "inter-op-gap", "_time_shares", "_time_parts")
    assert main(["rules", "check", "--rules", str(tmp_path), "--fixtures", str(tmp_path)]) == 1
    lines = [x for x in capsys.readouterr().out.splitlines() if "internal helper" in x]
    assert lines == [
        f"{target}: reads the internal helper _time_parts (a step of breakdown.sql, marked @internal): read a"
        " public helper (docs/rules.md) or the tables instead"
    ]


def test_rules_check_rule_reading_public_helpers_passes(tmp_path, capsys) -> None:
    _copy_rule(tmp_path, "inter-op-gap", "_time_shares", "_time_shares")
    main(["rules", "check", "--rules", str(tmp_path), "--fixtures", str(tmp_path)])
    assert "internal helper" not in capsys.readouterr().out


def test_rules_reference_lists_public_helpers_only() -> None:
    reference = render_rules_reference(list(RULES.values()))
    for definition in helper_definitions():
        heading = f"#### `{definition.name}"
        assert (heading in reference) != definition.internal, definition.name


def test_builtin_rules_read_no_internal_helper() -> None:
    assert RULES_DIR.is_dir()
    internal = {d.name for d in helper_definitions() if d.internal}
    assert internal  # the marking exists: the 10 steps of the modules
    for rule in RULES.values():
        assert not [n for n in internal if n in rule.sql + rule.evidence_sql], rule.name
