"""With --profile: each operator's device time and pipe shares from the profile of the same run, by op_name."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.accuracy.tables import insert_rows
from analyzer.ingest.model import Problem

# Dump file names replace these characters of an operator's name with '_'; the profile's names get the same.
_DUMP_NAME_CHARS = r"[./\\ ]"


def profile_rows(profile: Path, run_id: str) -> tuple[list[dict], list[Problem]]:
    """profile_ops rows of a profile export (analyzer.load), and the problems met reading it."""
    from analyzer.api import load  # the profile's readers load only when --profile is given

    with load(profile) as trace:
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
        return [{"run_id": run_id} | dict(zip(names, row, strict=True)) for row in rows], list(trace.problems)


def attach_profile(con: duckdb.DuckDBPyConnection, run_id: str, profile: Path) -> list[Problem]:
    """Fill profile_ops from ``profile``; returns the profile's reading problems."""
    rows, problems = profile_rows(profile, run_id)
    insert_rows(con, "profile_ops", rows)
    return problems
