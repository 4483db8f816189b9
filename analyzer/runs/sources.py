"""Load a run (an export path or 'CATALOG.duckdb:RUN') into an in-memory catalog: a side of a diff, a sweep point."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.duckdb_connect import connect_offline, is_duckdb_file
from analyzer.errors import first_line
from analyzer.ingest.database import insert_tables
from analyzer.ingest.metadata.discover import discover
from analyzer.ingest.metadata.fingerprint import source_fingerprint
from analyzer.ingest.metadata.no_export_note import no_export_note
from analyzer.ingest.model import IngestError
from analyzer.ingest.sql_values import in_list
from analyzer.runs.catalog import create_catalog_tables
from analyzer.runs.catalog_schema import PER_RUN_TABLES
from analyzer.runs.work import RunTask, WorkSettings, analyze_run


def memory_catalog() -> duckdb.DuckDBPyConnection:
    """An empty in-memory catalog."""
    con = connect_offline()
    create_catalog_tables(con)
    return con


def _split_catalog_spec(spec: str) -> tuple[Path, str] | None:
    head, sep, run = spec.rpartition(":")
    if sep and head.endswith((".duckdb", ".db")) and Path(head).is_file():
        return Path(head), run
    return None


def attach_catalog(con: duckdb.DuckDBPyConnection, catalog: Path) -> None:
    """ATTACH ``catalog`` read-only as ``src``; IngestError (and nothing attached) unless it is a catalog."""
    if not is_duckdb_file(catalog):
        raise IngestError(f"{catalog}: is not an npu-triage catalog (not a DuckDB file)")
    try:
        con.execute("ATTACH ? AS src (READ_ONLY)", [str(catalog)])
    except duckdb.Error as exc:
        raise IngestError(f"{catalog}: cannot be opened as a catalog: {first_line(exc)}") from None
    found = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'src' AND table_name = 'catalog_runs'"
    ).fetchall()[0][0]
    if not found:
        con.execute("DETACH src")
        raise IngestError(
            f"{catalog}: is a DuckDB file but not an npu-triage catalog (no catalog_runs table); "
            "give a catalog written by `npu-triage batch`"
        )


def _from_catalog(con: duckdb.DuckDBPyConnection, catalog: Path, run: str) -> str:
    attach_catalog(con, catalog)
    try:
        ids = [
            r[0]
            for r in con.execute(
                "SELECT run_id FROM src.catalog_runs WHERE run_id = $q OR path = $q OR starts_with(run_id, $q) "
                "ORDER BY run_id = $q DESC, path = $q DESC, run_id",
                {"q": run},
            ).fetchall()
        ]
        if not ids:
            raise IngestError(f"{catalog}: no run {run!r} (list them with `npu-triage runs {catalog}`)")
        exact = [i for i in ids if i == run]
        if len(ids) > 1 and not exact and len({i.split("@")[0] for i in ids}) > 1:
            raise IngestError(f"{catalog}: {run!r} matches several runs: {', '.join(ids[:5])}")
        run_id = exact[0] if exact else ids[0]
        if con.execute("SELECT count(*) FROM catalog_runs WHERE run_id = ?", [run_id]).fetchall()[0][0]:
            return run_id  # the same run on both sides (diff C:R C:R): loaded once, as an export path is
        for name in PER_RUN_TABLES:
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM src.{name} WHERE run_id = ?", [run_id])
        return run_id
    finally:
        con.execute("DETACH src")


def _from_path(con: duckdb.DuckDBPyConnection, path: Path, settings: WorkSettings) -> tuple[str, list[str]]:
    if not path.exists():
        raise IngestError(f"{path}: no such file or folder (nor CATALOG.duckdb:RUN_ID)")
    sources = discover(path)
    if not sources:
        raise IngestError(f"{path}: no Ascend profiling export found{no_export_note(path)}")
    others = ", ".join(str(s.rel_path) for s in sources[1:4]) + (", ..." if len(sources) > 4 else "")
    notes = (
        [
            f"{path} holds {len(sources)} exports; compared: {Path(path) / sources[0].rel_path} "
            f"(name one export folder to choose another: {others})"
        ]
        if len(sources) > 1
        else []
    )
    src = sources[0]
    tables = analyze_run(RunTask(str(src.root), str(path), source_fingerprint(src)), settings)
    if "failures" in tables:
        raise IngestError(f"{path}: {tables['failures'].column('message')[0].as_py()}")
    run_ids = tables["catalog_runs"].column("run_id").to_pylist()
    # The same export named twice (diff X X, a sweep listing it twice) has one run id: load it once.
    loaded = con.execute(f"SELECT count(*) FROM catalog_runs WHERE {in_list('run_id')}", [run_ids]).fetchall()[0][0]
    if not loaded:
        insert_tables(con, tables)
    if len(run_ids) > 1:
        notes.append(f"{path} holds {len(run_ids)} devices; {run_ids[0]} is compared")
    return run_ids[0], notes


def load_side(con: duckdb.DuckDBPyConnection, spec: str, settings: WorkSettings) -> tuple[str, list[str]]:
    """Put one side of a diff into ``con``; returns its run id and notes for the reader."""
    catalog = _split_catalog_spec(spec)
    if catalog:
        return _from_catalog(con, *catalog), []
    return _from_path(con, Path(spec), settings)
