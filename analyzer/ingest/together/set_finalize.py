"""finalize.finalize_run for many runs read together, each step one query over all of them.

The runs come here only with no problem and timed ops (none takes its ops from the timeline), so the steps
left are the device tasks written twice, the step markers' windows, the pipeline columns, the steps of ops,
what each run holds, the split of a run of several devices, and the runs rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import pyarrow as pa

from analyzer.ingest.file_work import each
from analyzer.ingest.finalize import (
    AIC_COUNTS,
    PRESENCE,
    STEP_OF_OP,
    aic_metrics_of,
    apply_facts,
    device_run_id,
    device_tasks_from_one_file,
    keep_track_devices,
    key_sets,
    run_values,
    split_devices,
)
from analyzer.ingest.metadata.run_metadata import RunMetadata
from analyzer.ingest.model import ReadContext
from analyzer.ingest.pipe_columns import derive_pipelines
from analyzer.ingest.sql_values import IN_RUNS
from analyzer.ingest.step_windows import merge_step_markers_of
from analyzer.ingest.timeline.timeline_store import delete_duplicate_device_tasks, runs_with_repeats


@dataclass
class ReadRun:
    """A run read together: its context (files read, problems, facts) and its metadata."""

    ctx: ReadContext
    meta: RunMetadata


def finalize_together(con: duckdb.DuckDBPyConnection, runs: list[ReadRun], devices: dict[str, list[int]]) -> None:
    """The runs rows of ``runs`` (in their order; a run of several devices split into one run per device,
    ``devices``: ``finalize.devices_of``), their ops given pipeline columns and steps."""
    ids = [r.ctx.run_id for r in runs]
    for r in runs:
        apply_facts(r.meta, r.ctx)
    twice = [r.ctx.run_id for r in runs if not device_tasks_from_one_file(r.ctx)]
    for run_id in runs_with_repeats(con, twice):  # readers mostly leave the repeats out already
        delete_duplicate_device_tasks(con, run_id)
    merge_step_markers_of(con, ids)
    derive_pipelines(con, ids)
    con.execute(
        f"UPDATE ops AS o SET step_id = s.step_id FROM steps s WHERE o.{IN_RUNS} AND s.run_id = o.run_id "
        f"AND {STEP_OF_OP}",
        {"runs": ids},
    )
    rows = _runs_rows(con, runs, devices)  # what each run holds, asked before the split, as finalize asks it
    keep_track_devices(con, ids)
    split_devices(con, devices)
    _insert_runs(con, rows)


def _runs_rows(con: duckdb.DuckDBPyConnection, runs: list[ReadRun], devices: dict[str, list[int]]) -> list[dict]:
    """The runs rows of ``runs`` but their counts over ops, one per device of a run of several."""
    has = _presence(con, [r.ctx.run_id for r in runs])
    aic = _aic_counts(con, [r.ctx.run_id for r in runs if not r.meta.aic_metrics])
    named = {run_id: aic_metrics_of(counts) for run_id, counts in aic.items()}
    others = key_sets(con, [run_id for run_id, name in named.items() if name is None])

    def rows(r: ReadRun) -> list[dict[str, object]]:
        run_id = r.ctx.run_id
        found = r.meta.aic_metrics or named.get(run_id) or others.get(run_id)
        values = run_values(r.ctx, r.meta, {k: run_id in v for k, v in has.items()}, found)  # hashes file samples
        device = devices.get(run_id) or []
        if len(device) <= 1:
            return [{"run_id": run_id, "device_id": device[0] if device else None, **values}]
        return [{"run_id": device_run_id(run_id, d), "device_id": d, **values} for d in device]

    return [row for found in each(rows, runs) for row in found]


def _insert_runs(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> None:
    """The runs rows, in their order, with their counts over ops."""
    con.register("_runs_together", pa.Table.from_pylist(rows))
    try:
        con.execute(
            "INSERT INTO runs BY NAME SELECT p.*, coalesce(o.task_count, 0) AS task_count, o.start_ns, o.end_ns "
            "FROM _runs_together p LEFT JOIN (SELECT run_id, count(*) AS task_count, min(start_ns) AS start_ns, "
            f"max(end_ns) AS end_ns FROM ops WHERE {IN_RUNS} GROUP BY run_id) o USING (run_id)",
            {"runs": [row["run_id"] for row in rows]},
        )
    finally:
        con.unregister("_runs_together")


def untimed(con: duckdb.DuckDBPyConnection, runs: list[str]) -> set[str]:
    """Of ``runs``, those without an op with a start time and a duration (finalize takes a timeline's device
    tasks for their ops, and says so: the careful path's)."""
    rows = con.execute(
        f"SELECT DISTINCT run_id FROM ops WHERE {IN_RUNS} AND start_ns IS NOT NULL AND dur_us IS NOT NULL",
        {"runs": runs},
    ).fetchall()
    return set(runs) - {r[0] for r in rows}


def _presence(con: duckdb.DuckDBPyConnection, runs: list[str]) -> dict[str, set[str]]:
    """finalize._presence of every run: per question, the runs whose rows answer yes (one scan per table)."""
    has: dict[str, set[str]] = {key: set() for key in PRESENCE}
    asked: dict[str, list[tuple[str, str]]] = {}
    for key, (table, where) in PRESENCE.items():
        asked.setdefault(table, []).append((key, where))
    for table, questions in asked.items():
        answers = ", ".join(f"bool_or({where})" for _, where in questions)
        sql = f"SELECT run_id, {answers} FROM {table} WHERE {IN_RUNS} GROUP BY run_id"
        for run_id, *yes in con.execute(sql, {"runs": runs}).fetchall():
            for (key, _), answer in zip(questions, yes, strict=True):
                if answer:
                    has[key].add(run_id)
    return has


def _aic_counts(con: duckdb.DuckDBPyConnection, runs: list[str]) -> dict[str, tuple]:
    """finalize.AIC_COUNTS of each run."""
    if not runs:
        return {}
    rows = con.execute(f"SELECT run_id, {AIC_COUNTS} FROM ops WHERE {IN_RUNS} GROUP BY run_id", {"runs": runs})
    return {r[0]: tuple(r[1:]) for r in rows.fetchall()}
