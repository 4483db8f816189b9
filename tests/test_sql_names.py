"""The SQL the engine runs (rule files, .sql modules) names its CTEs for what they hold, not with a letter or two."""

from __future__ import annotations

import re
from pathlib import Path

from analyzer.rule_engine.loader import load_rule, rule_files

ROOT = Path(__file__).resolve().parents[1]
_CTE = re.compile(r"(?:\bWITH\s+(?:RECURSIVE\s+)?|,\s*)(\w+)\s+AS\s+(?:NOT\s+)?(?:MATERIALIZED\s+)?\(", re.IGNORECASE)


def cte_names(sql: str) -> list[str]:
    """CTE names of a SQL text, comments left out.

    >>> cte_names("WITH t AS (SELECT 1), per_type AS (SELECT 2) -- x AS (\\nSELECT * FROM t, per_type")
    ['t', 'per_type']
    """
    return _CTE.findall(re.sub(r"--[^\n]*", "", sql))


def _sql_texts() -> dict[str, str]:
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in (ROOT / "analyzer").rglob("*.sql")}
    for path in rule_files(ROOT / "rules"):
        rule = load_rule(path)
        texts[str(path.relative_to(ROOT))] = rule.sql + "\n" + rule.evidence_sql
    return texts


def test_sql_cte_names_say_what_they_hold() -> None:
    texts = _sql_texts()
    assert sum(len(cte_names(t)) for t in texts.values()) > 150  # the pattern finds the CTEs
    short = {name: found for name, t in texts.items() if (found := [c for c in cte_names(t) if len(c) < 3])}
    assert short == {}
