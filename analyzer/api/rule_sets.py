"""The rules a diagnosis runs: a folder's rules validated, and a chosen set configured with overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzer.errors import TriageError
from analyzer.rule_engine.loader import default_rules_dir, load_rules
from analyzer.rule_engine.model import ConfiguredRules, Rule
from analyzer.rule_engine.params import check_overrides
from analyzer.rule_engine.validation import validate_rules


class RuleSetError(TriageError, ValueError):
    """A rules folder that cannot be used: missing, empty, or with invalid rule files (all listed)."""


def rules(rules_dir: Path | str | None = None) -> list[Rule]:
    """The rules of a folder (default: the built-in rules), validated; RuleSetError lists every problem."""
    folder = Path(rules_dir) if rules_dir is not None else default_rules_dir()
    if not folder.is_dir():
        raise RuleSetError(f"{folder}: no such rules folder")
    loaded = load_rules(folder)
    problems = validate_rules(loaded)
    if problems:
        lines = [f"{path}: {p}" for path, ps in problems.items() for p in ps]
        raise RuleSetError("invalid rule files (see `npu-triage rules check`):\n" + "\n".join(lines))
    if not loaded:
        raise RuleSetError(f"{folder}: holds no rule files (<category>/<rule-name>.toml)")
    return loaded


def configured(rule_set: list[Rule] | None, params: dict[str, dict[str, Any]] | None, preview: bool) -> ConfiguredRules:
    """The rules to run: ``rule_set`` (None: every built-in rule; []: none) with ``params`` checked as the
    command line checks --set and --config (ParamError names an unknown rule or param, a value of another
    kind, None, NaN)."""
    chosen = rules() if rule_set is None else list(rule_set)
    return ConfiguredRules(tuple(chosen), check_overrides(dict(params or {}), chosen), preview)
