"""The rule fixture cases on disk: every (rule, case folder) pair under fixtures/rules/."""

from __future__ import annotations

from pathlib import Path

from analyzer.rule_engine.loader import load_rules
from analyzer.rule_engine.model import Rule

ROOT = Path(__file__).resolve().parents[1]
RULES_DIR = ROOT / "rules"
FIXTURES_DIR = ROOT / "fixtures" / "rules"
RULES: dict[str, Rule] = {r.name: r for r in load_rules(RULES_DIR)}


def case_dirs() -> list[Path]:
    """Every fixtures/rules/<rule>/<case>/ folder, sorted."""
    return sorted(p for p in FIXTURES_DIR.glob("*/*") if p.is_dir())


def case_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"
