"""The runs of a batch-size sweep, into an in-memory catalog: 'PATH:bs=N' exports, or a model's runs of a catalog."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import duckdb

from analyzer.errors import TriageError
from analyzer.ingest.metadata.discover import discover
from analyzer.runs.catalog_schema import PER_RUN_TABLES
from analyzer.runs.sources import attach_catalog, load_side
from analyzer.runs.work import WorkSettings

_SPEC = re.compile(r"^(?P<path>.+):bs=(?P<bs>.*)$")
MAX_BATCH_SIZE = 2**31 - 1  # the catalog's batch_size is an INTEGER


class SweepSpecError(TriageError, ValueError):
    """A sweep label that cannot be a batch size, or one export given two; the message names it."""


def parse_sweep_spec(spec: str) -> tuple[str, int | None]:
    """'runs/a:bs=8' -> ('runs/a', 8); a bare path keeps the batch sizes its metadata records.
    SweepSpecError for a label that is not a whole number from 1 to MAX_BATCH_SIZE.

    >>> parse_sweep_spec("runs/a:bs=8"), parse_sweep_spec("runs")
    (('runs/a', 8), ('runs', None))
    """
    m = _SPEC.match(spec)
    if not m:
        return spec, None
    text = m.group("bs").strip()
    if not re.fullmatch(r"[0-9]+", text) or not 1 <= int(text) <= MAX_BATCH_SIZE:
        raise SweepSpecError(f"{spec}: bs={text!r} is not a batch size (a whole number from 1 to {MAX_BATCH_SIZE})")
    return m.group("path"), int(text)


def check_sweep_specs(specs: list[str]) -> list[tuple[str, int | None]]:
    """Every spec parsed, before any work; SweepSpecError for a bad label or one export labelled twice
    with different batch sizes (one run has one batch size)."""
    parsed = [parse_sweep_spec(s) for s in specs]
    sizes: dict[Path, set[int]] = {}
    for path, bs in parsed:
        if bs is not None:
            sizes.setdefault(Path(path).resolve(), set()).add(bs)
    for export, found in sorted(sizes.items()):
        if len(found) > 1:
            raise SweepSpecError(
                f"{export} is labelled with {len(found)} batch sizes ({', '.join(f'bs={b}' for b in sorted(found))}): "
                "one export is one run of one batch size"
            )
    return parsed


def load_sweep_paths(con: duckdb.DuckDBPyConnection, specs: list[str], settings: WorkSettings) -> list[str]:
    """Analyse each 'PATH:bs=N' export (or every export under a bare PATH) into ``con``; returns the run ids."""
    run_ids = []
    for path, bs in check_sweep_specs(specs):
        # A folder without a label may hold several runs: each keeps the batch size of its metadata.
        roots = [path] if bs is not None else [str(s.root) for s in discover(Path(path))] or [path]
        for root in roots:
            run_id, _ = load_side(con, root, replace(settings, batch_size=bs))
            run_ids.append(run_id)
    return run_ids


def load_sweep_catalog(con: duckdb.DuckDBPyConnection, catalog: Path, model: str | None) -> int:
    """Copy the runs with a batch size (of one model, when given) from a catalog file; returns how many."""
    attach_catalog(con, catalog)
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
