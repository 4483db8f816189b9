"""Options of the commands that run rules: --rules, --set, --config, --preview."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from analyzer.api import rules as rule_set
from analyzer.rule_engine.model import Rule
from analyzer.rule_engine.params import (
    by_rule_name,
    check_overrides,
    merge_overrides,
    parse_set_options,
    read_config,
)


def add_rule_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", type=Path, help="rules folder (default: the built-in rules)")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="RULE.PARAM=VALUE",
        help="override a rule param (RULE: its name or code), e.g. --set RULE.threshold=0.35 (repeatable)",
    )
    p.add_argument("--config", type=Path, help="TOML file of param overrides: [rule-name or code] param = value")
    p.add_argument("--preview", action="store_true", help="also run rules whose status is 'preview'")


def load_checked_rules(rules_dir: Path | None) -> list[Rule]:
    """The rules of a folder, after validation; RuleFileError or RuleSetError listing every problem otherwise."""
    return rule_set(rules_dir)


def rule_overrides(args: argparse.Namespace, rules: list[Rule]) -> dict[str, dict[str, Any]]:
    """--config then --set overrides (rule names or codes), checked against the rules (ParamError when unknown)."""
    layers = [read_config(args.config)] if args.config else []
    layers.append(parse_set_options(args.overrides))
    return check_overrides(merge_overrides(*(by_rule_name(layer, rules) for layer in layers)), rules)
