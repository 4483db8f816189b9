"""With --profile: each operator's device time and pipe shares from the profile of the same run, by op_name."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.accuracy.tables import insert_rows
from analyzer.ingest.model import Problem

# Dump file names replace these characters of an operator's name with '_'; the profile's names get the same.
_DUMP_NAME_CHARS = r"[./\\ ]"


def profile_rows(profile: Path, run_id: str) -> tuple[list[dict], list[str], list[Problem]]:
    """profile_ops rows of a profile export (analyzer.load), its run ids, and the problems met reading it."""
    from analyzer.api import load  # the profile's readers load only when --profile is given

    with load(profile, logs=False) as trace:  # the ops only: no CANN logs beside it are read
        rows = trace.con.execute(
            f"""
            SELECT regexp_replace(op_name, '{_DUMP_NAME_CHARS}', '_', 'g') AS op_name, count(*) AS launches,
                   sum(dur_us) AS device_time_us,
                   sum(cube_time_us) / nullif(sum(core_time_us), 0) AS cube_ratio,
                   sum(vector_time_us) / nullif(sum(core_time_us), 0) AS vector_ratio,
                   sum(mte_time_us) / nullif(sum(core_time_us), 0) AS mte_ratio
            FROM ops WHERE op_name IS NOT NULL GROUP BY 1 ORDER BY 1
            """
        ).fetchall()
        names = ("op_name", "launches", "device_time_us", "cube_ratio", "vector_ratio", "mte_ratio")
        runs = [r for (r,) in trace.con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
        return [{"run_id": run_id} | dict(zip(names, row, strict=True)) for row in rows], runs, list(trace.problems)


def attach_profile(con: duckdb.DuckDBPyConnection, run_id: str, profile: Path) -> tuple[dict, list[Problem]]:
    """Fill profile_ops from ``profile``; returns what the reports say of it (the export's path and run ids,
    by which diagnose's report of those runs finds the accuracy report) and the profile's reading problems."""
    rows, runs, problems = profile_rows(profile, run_id)
    insert_rows(con, "profile_ops", rows)
    return {"path": str(Path(profile).resolve()), "run_ids": runs}, problems
