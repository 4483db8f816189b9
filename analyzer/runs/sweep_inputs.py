"""The runs of a batch-size sweep, into an in-memory catalog: 'PATH:bs=N' exports, or a model's runs of a catalog."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import duckdb

from analyzer.duckdb_connect import is_duckdb_file
from analyzer.ingest.metadata.discover import discover
from analyzer.ingest.model import IngestError
from analyzer.runs.catalog_schema import PER_RUN_TABLES
from analyzer.runs.sources import load_side
from analyzer.runs.work import WorkSettings

_SPEC = re.compile(r"^(?P<path>.+):bs=(?P<bs>[0-9]+)$")


def parse_sweep_spec(spec: str) -> tuple[str, int | None]:
    """'runs/a:bs=8' -> ('runs/a', 8); a bare path keeps the batch sizes its metadata records.

    >>> parse_sweep_spec("runs/a:bs=8"), parse_sweep_spec("runs")
    (('runs/a', 8), ('runs', None))
    """
    m = _SPEC.match(spec)
    if not m:
        return spec, None
    return m.group("path"), int(m.group("bs"))


def load_sweep_paths(con: duckdb.DuckDBPyConnection, specs: list[str], settings: WorkSettings) -> list[str]:
    """Analyse each 'PATH:bs=N' export (or every export under a bare PATH) into ``con``; returns the run ids."""
    run_ids = []
    for spec in specs:
        path, bs = parse_sweep_spec(spec)
        # A folder without a label may hold several runs: each keeps the batch size of its metadata.
        roots = [path] if bs is not None else [str(s.root) for s in discover(Path(path))] or [path]
        for root in roots:
            run_id, _ = load_side(con, root, replace(settings, batch_size=bs))
            run_ids.append(run_id)
    return run_ids


def load_sweep_catalog(con: duckdb.DuckDBPyConnection, catalog: Path, model: str | None) -> int:
    """Copy the runs with a batch size (of one model, when given) from a catalog file; returns how many."""
    if not is_duckdb_file(catalog):
        raise IngestError(f"{catalog}: is not an npu-triage catalog (not a DuckDB file)")
    con.execute("ATTACH ? AS src (READ_ONLY)", [str(catalog)])
    try:
        con.execute(
            "CREATE TEMP TABLE _picked AS SELECT run_id FROM src.catalog_runs WHERE batch_size IS NOT NULL "
            "AND ($m IS NULL OR model_name = $m)",
            {"m": model},
        )
        for name in PER_RUN_TABLES:
            con.execute(
                f"INSERT INTO {name} BY NAME SELECT * FROM src.{name} WHERE run_id IN (SELECT run_id FROM _picked)"
            )
        return con.execute("SELECT count(*) FROM _picked").fetchall()[0][0]
    finally:
        con.execute("DROP TABLE IF EXISTS _picked")
        con.execute("DETACH src")
