"""Every rank a job implies accounted for: present, or named as absent or without usable data, and the
collective wait that no present rank explains measured."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from analyzer.ingest.metadata.discover import printable
from analyzer.ingest.model import Problem
from analyzer.job.grouping import Job

# Ranks the job's files name: in its communication matrices (global ranks) and its metadata groups.
_NAMED = """
SELECT DISTINCT r FROM (
    SELECT src_rank AS r FROM job_links WHERE run_id = $job UNION ALL SELECT dst_rank FROM job_links WHERE run_id = $job
    UNION ALL SELECT rank FROM job_groups WHERE run_id = $job AND source LIKE 'metadata%'
) WHERE r IS NOT NULL ORDER BY r
"""
_WITHOUT_DATA = """
SELECT rank FROM job_ranks r WHERE run_id = $job
  AND NOT EXISTS (SELECT 1 FROM job_steps s WHERE s.run_id = $job AND s.rank = r.rank AND s.stage_us IS NOT NULL)
  AND NOT EXISTS (SELECT 1 FROM job_comm_ops o WHERE o.run_id = $job AND o.rank = r.rank AND o.wait_us IS NOT NULL)
ORDER BY rank
"""
# In each collective the least any present rank waited is a wait that none of them caused: they all
# waited for something else (an absent rank, or one whose values were dropped).
_UNEXPLAINED = """
WITH per_op AS (
    SELECT step_id, min(wait_us) AS unexplained_us FROM job_comm_ops
    WHERE run_id = $job AND op_kind = 'collective' AND op_rank_count >= 2 AND wait_us IS NOT NULL
    GROUP BY step_id, group_name, op_name
),
step AS (SELECT avg(s) AS step_us FROM (SELECT max(stage_us) AS s FROM job_steps WHERE run_id = $job GROUP BY step_id))
SELECT sum(unexplained_us) / count(DISTINCT step_id), any_value(step.step_us) FROM per_op, step
"""
# Ranks with collectives whose wait was dropped (value_checks.py): no verdict can say whether they were late.
_DROPPED_WAITS = """
SELECT DISTINCT rank FROM job_comm_ops
WHERE run_id = $job AND op_kind = 'collective' AND op_rank_count >= 2 AND wait_us IS NULL ORDER BY rank
"""
# A wait none of the present ranks explains is named from this share of the job step (the late-rank rule's
# default threshold for the wait one rank causes).
UNEXPLAINED_SHARE = 0.05


def ranks_text(ranks: list[int]) -> str:
    """'5, 9-12' for [5, 9, 10, 11, 12].

    >>> ranks_text([0, 2, 3, 4, 7])
    '0, 2-4, 7'
    """
    runs: list[list[int]] = []
    for r in ranks:
        if runs and r == runs[-1][-1] + 1:
            runs[-1].append(r)
        else:
            runs.append([r])
    return ", ".join(str(x[0]) if len(x) == 1 else f"{x[0]}-{x[-1]}" for x in runs)


def _folder(job: Job) -> str:
    """The folder holding the job's ranks (the deepest common one), as problems name files."""
    return printable(Path(os.path.commonpath([r.source.root.parent for r in job.ranks])))


def _unexplained(con: duckdb.DuckDBPyConnection, params: dict) -> str:
    """The collective wait no present rank explains, said, when it is at least UNEXPLAINED_SHARE of the step."""
    wait_us, step_us = con.execute(_UNEXPLAINED, params).fetchall()[0]
    if not (wait_us and step_us and wait_us >= UNEXPLAINED_SHARE * step_us):
        return ""
    return (
        f"every present rank waits at least {wait_us / 1000:.1f} ms per step ({wait_us / step_us:.0%} of the "
        f"{step_us / 1000:.1f} ms job step) in collectives that no present rank is late for"
    )


def _absent(folder: str, job: Job, missing: list[int], implied: int, waits: str) -> Problem:
    size = f"world size {job.world_size}" if job.world_size else "its metadata groups and matrices"
    return Problem(
        folder,
        "ranks",
        "error",
        f"{len(missing)} of the {implied} ranks the job implies ({size}) have no export here: rank(s) "
        f"{ranks_text(missing)}; the job verdicts cannot name them" + (f", and {waits}" if waits else ""),
        "copy every rank's export into the job's folder (a rank the others wait for may be the one missing)",
    )


def _dropped(con: duckdb.DuckDBPyConnection, params: dict, folder: str, waits: str) -> Problem:
    dropped = [r for (r,) in con.execute(_DROPPED_WAITS, params).fetchall()]
    who = (
        f"rank(s) {ranks_text(dropped)}, whose waits were dropped (see the problems of their "
        "communication.json), may be the one(s) they wait for: no late-rank verdict can see them"
        if dropped
        else "a rank's values were dropped or it is not here"
    )
    return Problem(folder, "collectives", "warning", f"{waits}: {who}")


def _empty(folder: str, empty: list[int]) -> Problem:
    return Problem(
        folder,
        "ranks",
        "error",
        f"rank(s) {ranks_text(empty)} hold no usable step time nor collective wait: the job verdicts leave them out",
        "re-export these ranks with step_trace_time.csv and communication.json (profiler level 1 or higher)",
    )


def account_ranks(con: duckdb.DuckDBPyConnection, job: Job) -> list[Problem]:
    """Errors for the ranks the job implies (its world size, its metadata groups, its matrices) that are
    absent, and for present ranks without a usable step or wait; a warning for the collective wait
    that no present rank explains, when it is at least UNEXPLAINED_SHARE of the job step."""
    params = {"job": job.job_id}
    implied = set(range(job.world_size or 0)) | {r for (r,) in con.execute(_NAMED, params).fetchall()}
    missing = sorted(implied - {r.rank for r in job.ranks})
    empty = [r for (r,) in con.execute(_WITHOUT_DATA, params).fetchall()]
    folder, waits, problems = _folder(job), _unexplained(con, params), []
    if missing:
        problems.append(_absent(folder, job, missing, len(implied), waits))
    elif waits:
        problems.append(_dropped(con, params, folder, waits))
    if empty:
        problems.append(_empty(folder, empty))
    return problems
