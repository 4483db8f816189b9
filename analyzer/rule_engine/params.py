"""User overrides of rule params: ``--set rule.param=value`` and a TOML config file."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

from analyzer.errors import TriageError
from analyzer.rule_engine.chip_table import CHIP_KEY, check_chip_overrides
from analyzer.rule_engine.model import Rule


class ParamError(TriageError):
    """An override naming an unknown rule or param, or of the wrong type. Meant for the user."""


def parse_value(text: str) -> Any:
    """A value as TOML reads it; anything TOML cannot read stays a string.

    >>> parse_value("0.35"), parse_value("200"), parse_value("true"), parse_value("AI_CORE")
    (0.35, 200, True, 'AI_CORE')
    """
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_set_options(items: list[str]) -> dict[str, dict[str, Any]]:
    """``["my-rule.threshold=0.35"]`` -> ``{"my-rule": {"threshold": 0.35}}``.

    >>> parse_set_options(["my-rule.min_share=0.1"])
    {'my-rule': {'min_share': 0.1}}
    """
    result: dict[str, dict[str, Any]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        rule, dot, param = key.strip().rpartition(".")
        if not sep or not dot or not rule or not param:
            raise ParamError(f"--set {item!r}: expected RULE.PARAM=VALUE, e.g. my-rule.threshold=0.35")
        result.setdefault(rule, {})[param] = parse_value(value.strip())
    return result


def read_config(path: Path) -> dict[str, dict[str, Any]]:
    """Overrides from a TOML file of rule tables: ``[my-rule] threshold = 0.35``."""
    try:
        doc = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ParamError(f"{path}: cannot be read: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ParamError(f"{path}: not valid TOML: {exc}") from None
    bad = [k for k, v in doc.items() if not isinstance(v, dict)]
    if bad:
        raise ParamError(f"{path}: {bad[0]!r} is not a table; write [rule-name] then param = value lines")
    return doc


def _same_kind(default: Any, value: Any) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, (int, float)):
        return isinstance(value, (int, float))
    return isinstance(value, type(default))


def by_rule_name(overrides: dict[str, dict[str, Any]], rules: list[Rule]) -> dict[str, dict[str, Any]]:
    """The overrides keyed by rule name: a rule's code (its id) stands for its name, as in `rules show`; the
    entries given later win per param. Unknown keys stay as they are (check_overrides names them)."""
    names = {r.id: r.name for r in rules}
    named: dict[str, dict[str, Any]] = {}
    for key, values in overrides.items():
        if isinstance(values, dict):
            named.setdefault(names.get(key, key), {}).update(values)
        else:
            named[names.get(key, key)] = values
    return named


def check_overrides(overrides: dict[str, dict[str, Any]], rules: list[Rule]) -> dict[str, dict[str, Any]]:
    """The overrides keyed by rule name (by_rule_name), after checking each rule and param exists and has the
    default's type."""
    overrides = by_rule_name(overrides, rules)
    by_name = {r.name: r for r in rules}
    for rule_name, values in overrides.items():
        if rule_name == CHIP_KEY:
            if problems := check_chip_overrides(values):
                raise ParamError("; ".join(problems))
            continue
        rule = by_name.get(rule_name)
        if rule is None:
            raise ParamError(
                f"unknown rule {rule_name!r} (give a rule name or code); rules: {', '.join(sorted(by_name))}"
            )
        for param, value in values.items():
            if param not in rule.params:
                known = ", ".join(sorted(rule.params)) or "none"
                raise ParamError(f"rule {rule_name!r} has no param {param!r}; its params: {known}")
            if not _same_kind(rule.params[param], value):
                raise ParamError(f"{rule_name}.{param}={value!r}: expected a value like {rule.params[param]!r}")
            if isinstance(value, float) and not math.isfinite(value):  # nan/inf would silently disable the rule
                raise ParamError(f"{rule_name}.{param}={value!r}: expected a finite number like {rule.params[param]!r}")
    return overrides


def merge_overrides(*layers: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Later layers win per param (config file first, then --set)."""
    merged: dict[str, dict[str, Any]] = {}
    for layer in layers:
        for rule, values in layer.items():
            merged.setdefault(rule, {}).update(values)
    return merged
