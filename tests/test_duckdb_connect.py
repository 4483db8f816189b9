"""One place builds DuckDB connections (analyzer/duckdb_connect.py): every connection of the program is offline,
under the process's memory limit and spills to a private folder; no other module connects or changes those."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import duckdb
import pytest

from analyzer.duckdb_connect import close_to_files, connect_offline
from analyzer.execution.memory import ENV as MEMORY_ENV
from analyzer.ingest.database import connect, load_duckdb, save_duckdb
from analyzer.runs.catalog import open_catalog
from analyzer.runs.sources import memory_catalog

ROOT = Path(__file__).resolve().parent.parent
# Building a connection, or changing what the builder set, anywhere else (fixed_order's SET threads is a
# temporary change it undoes, not a setting of the connection).
_BUILDING = re.compile(
    r"duckdb\.connect\(|temp_directory|SET\s+memory_limit|enable_external_access|lock_configuration|_known_extensions"
)


def _settings(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    names = ("autoinstall_known_extensions", "autoload_known_extensions", "memory_limit", "temp_directory")
    rows = con.execute("SELECT name, value FROM duckdb_settings() WHERE name IN ?", [list(names)]).fetchall()
    return dict(rows)


def test_no_other_module_builds_a_connection_or_changes_its_settings():
    elsewhere = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in sorted((ROOT / "analyzer").rglob("*.py"))
        if p.name != "duckdb_connect.py"
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if _BUILDING.search(line) and ">>>" not in line
    ]
    assert not elsewhere, f"DuckDB connections built outside analyzer/duckdb_connect.py: {elsewhere}"


def _connections(tmp_path: Path):
    """A connection of every kind the program opens: working tables, a DuckDB file copied in, an in-memory
    catalog, a catalog file written and read."""
    db = tmp_path / "runs.duckdb"
    with connect() as con:
        save_duckdb(con, db, ["r"])
    catalog = tmp_path / "catalog.duckdb"
    open_catalog(catalog).close()
    return {
        "working tables": connect(),
        "database copied in": load_duckdb(db),
        "memory catalog": memory_catalog(),
        "catalog file": open_catalog(catalog, read_only=True),
        "duckdb file": connect_offline(str(db), read_only=True),
    }


@pytest.mark.slow
def test_every_connection_is_offline_limited_and_spills_to_a_private_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "300MiB")
    folders = set()
    for kind, con in _connections(tmp_path).items():
        found = _settings(con)
        assert found["autoinstall_known_extensions"] == found["autoload_known_extensions"] == "false", kind
        assert found["memory_limit"] == "300.0 MiB", kind
        spill = Path(found["temp_directory"])
        assert spill.parent == Path(tempfile.gettempdir()) and spill.name.startswith("npu-triage-spill-"), kind
        folders.add(spill)
        con.close()
    assert len(folders) == 5  # one private folder each, never the '.tmp' beside a database file
    assert not list(tmp_path.glob("*.tmp"))


def test_the_sandbox_closes_a_connection_to_files(tmp_path):
    con = connect()
    close_to_files(con, lock_settings=True)
    with pytest.raises(duckdb.Error):
        con.execute("COPY (SELECT 1) TO ?", [str(tmp_path / "out.csv")])
    with pytest.raises(duckdb.Error):
        con.execute("SET memory_limit = '8GB'")
    assert not (tmp_path / "out.csv").exists()
