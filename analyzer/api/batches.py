"""Analyse every export of a tree (or archive) into a catalog: ``npu-triage batch``'s work."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import duckdb

from analyzer.ingest.metadata.discover import Scanned
from analyzer.runs.archives import DEFAULT_LIMITS, Limits
from analyzer.runs.batch import BatchOutcome, run_batch
from analyzer.runs.catalog import open_catalog
from analyzer.runs.dask_executor import DaskExecutor
from analyzer.runs.executor import LocalPool, default_jobs
from analyzer.runs.scratch import temp_root
from analyzer.runs.work import RunTask, WorkSettings


def batch(
    root: Path | str,
    catalog: Path | str | duckdb.DuckDBPyConnection,
    *,
    rules_dir: Path | str | None = None,
    diagnose: bool = True,
    executor: LocalPool | DaskExecutor | None = None,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[RunTask, str], None] | None = None,
    limits: Limits = DEFAULT_LIMITS,
    scanned: Scanned | None = None,
) -> BatchOutcome:
    """Every export under ``root`` (folders and archives) analysed and committed into ``catalog`` (a DuckDB
    file, created or extended, or a connection of ``runs.catalog.open_catalog``, closed at the end); runs
    already catalogued are skipped. Returns what was catalogued, skipped and failed.

    Args:
        rules_dir: rules folder (default: the built-in rules); ``diagnose``: False catalogs metrics only.
        executor: where the runs are analysed (default: a local pool of a worker per core).
        on_start: told how many exports will be analysed; ``on_done(task, status)``: after each commit.
        limits: archive extraction limits; ``scanned``: the root's ``discover.scan`` when walked already.
    """
    con = catalog if isinstance(catalog, duckdb.DuckDBPyConnection) else open_catalog(Path(catalog))
    settings = WorkSettings(rules_dir=str(rules_dir) if rules_dir else None, diagnose=diagnose)
    pool = executor if executor is not None else LocalPool(default_jobs())
    # the workers' temporary files go inside the batch's folder, removed after them
    with temp_root(), pool, closing(con):
        return run_batch(Path(root), con, settings, pool, on_start, on_done, limits, scanned)
