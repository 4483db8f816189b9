"""Every .sql module of analyzer/ has its table test here, naming each relation, table macro or view it defines."""

from __future__ import annotations

from pathlib import Path

from analyzer.sql_modules import parse_module

ROOT = Path(__file__).resolve().parents[2]
VIEWS_TESTS = Path(__file__).resolve().parent


def _modules() -> list[Path]:
    return sorted((ROOT / "analyzer").rglob("*.sql"))


def test_every_sql_module_has_a_table_test():
    stems = [p.stem for p in _modules()]
    assert len(stems) == len(set(stems)), f"two .sql modules share a name: {sorted(stems)}"
    missing = [str(p.relative_to(ROOT)) for p in _modules() if not (VIEWS_TESTS / f"test_{p.stem}.py").is_file()]
    assert missing == [], f"no tests/views/test_<module>.py for: {', '.join(missing)}"


def test_every_definition_is_named_by_its_modules_table_test():
    unnamed = []
    for path in _modules():
        test = VIEWS_TESTS / f"test_{path.stem}.py"
        text = test.read_text(encoding="utf-8") if test.is_file() else ""
        _, definitions = parse_module(path.read_text(encoding="utf-8"), path.stem)
        unnamed += [f"{path.stem}.sql: {d.name}" for d in definitions if d.name not in text]
    assert unnamed == [], f"relations no table test reads: {', '.join(unnamed)}"
