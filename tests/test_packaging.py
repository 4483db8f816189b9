"""The wheel's package list names every package under analyzer/, and the built-in rules ship with it."""

from __future__ import annotations

import tomllib

from tests.conftest import ROOT


def test_packaging_lists_every_analyzer_package_and_the_builtin_rules():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "analyzer").rglob("__init__.py")}
    assert set(config["packages"]) == on_disk | {"analyzer.builtin_rules"}
    assert config["package-dir"] == {"analyzer.builtin_rules": "rules"}
    assert (ROOT / "rules" / "__init__.py").is_file()


def test_packaging_ships_the_sql_modules():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    holding_sql = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "analyzer").rglob("*.sql")}
    assert holding_sql == {"analyzer.accuracy", "analyzer.logs", "analyzer.metrics", "analyzer.rule_engine.views"}
    assert all("*.sql" in data.get(package, []) for package in holding_sql)


def test_packaging_ships_every_data_file_the_analyzer_reads():
    """A file under analyzer/ that is not Python (a TOML declaration, a SQL module) is package data of its
    package, so that an installed npu-triage finds it."""
    import fnmatch

    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    data_files = [p for p in (ROOT / "analyzer").rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")]
    assert data_files
    for path in data_files:
        package = ".".join(path.parent.relative_to(ROOT).parts)
        globs = package_data.get(package, [])
        assert any(fnmatch.fnmatch(path.name, g) for g in globs), f"{path}: not in the package-data of {package}"
