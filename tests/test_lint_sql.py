"""CI's sqlfluff run (.ci/lint_sql.py) lints the SQL the engine runs, each rule's at its own TOML lines."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from analyzer.rule_engine.loader import load_rule, rule_files

ROOT = Path(__file__).resolve().parents[1]


def _lint_sql():
    spec = importlib.util.spec_from_file_location("lint_sql", ROOT / ".ci" / "lint_sql.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_lint_sql_writes_every_rule_sql_on_its_toml_lines(tmp_path) -> None:
    written = _lint_sql().write_rule_sql(ROOT / "rules", tmp_path)
    rules = [load_rule(p) for p in rule_files(ROOT / "rules")]
    assert written == sum(bool(r.sql.strip()) + bool(r.evidence_sql.strip()) for r in rules) > 40
    for rule in rules:
        toml_lines = Path(rule.path).read_text(encoding="utf-8").splitlines()
        sql_file = tmp_path / rule.category / f"{rule.name}.query.sql"
        sql_lines = sql_file.read_text(encoding="utf-8").splitlines()
        first = next(n for n, line in enumerate(sql_lines) if line.strip())
        assert sql_lines[first:] == toml_lines[first : first + len(sql_lines) - first], rule.name
