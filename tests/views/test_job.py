"""job.sql: what a job's aligned communication operations cost each rank per job step."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.job.rank_checks import ranks_text
from tests.views.view_case import module_database, rows

# Job j over 2 steps (a step counts when any op of the query's input is in it): rank 0 waits at three ops,
# rank 1 at one op, rank 2 only at an op the query does not count (wait NULL), rank 3 only in job k.
JOB_COMM_OPS = """
run_id,rank,step_id,op_kind,group_name,op_name,wait_us,transit_us
j,0,1,collective,g1,allreduce_1,10.0,1.0
j,0,2,collective,g1,allreduce_1,30.0,1.0
j,0,2,collective,g2,allgather_1,6.0,2.0
j,1,1,collective,g1,allreduce_1,4.0,1.0
j,2,2,p2p,g3,send_1,,5.0
k,3,1,collective,g1,allreduce_1,99.0,1.0
"""

con = module_database(job_comm_ops=JOB_COMM_OPS)


def _waits(con, where: str = "TRUE", us: str = "wait_us") -> list[tuple]:
    sql = (
        f"WITH ops AS (SELECT rank, step_id, group_name, op_name, {us} AS us FROM job_comm_ops "
        f"WHERE run_id = 'j' AND {where}) SELECT * FROM _job_rank_step_waits(ops) ORDER BY rank"
    )
    return rows(con, sql)


def test_each_ranks_counted_time_is_summed_over_the_steps_of_the_whole_input(con):
    # rank 0: (10 + 30 + 6) / 2 steps; rank 1: 4 / 2 (it waited in one step of the two); rank 2 counts for
    # nothing but its step; job k's rank is not in the input
    assert _waits(con) == [(0, 23.0), (1, 2.0), (2, None)]


def test_the_steps_are_those_of_the_input_only(con):
    # the input holds step 1 only: one step, each rank's whole sum
    assert _waits(con, "step_id = 1") == [(0, 10.0), (1, 4.0)]


def test_a_rank_with_only_uncounted_ops_gets_null_and_its_steps_still_count(con):
    # only group g2 counts (others NULL), over both steps of the collectives
    counted = "CASE WHEN group_name = 'g2' THEN wait_us + transit_us END"
    assert _waits(con, "op_kind = 'collective'", counted) == [(0, 4.0), (1, None)]


def test_rank_ranges_write_each_run_of_consecutive_ranks_as_its_ends(con):
    src = "SELECT * FROM (VALUES (1, 0), (1, 2), (1, 4), (1, 3), (1, 7), (1, 3), (2, 5), (3, NULL)) t(key, rank)"
    got = rows(con, f"WITH s AS ({src}) SELECT * FROM _rank_ranges(s) ORDER BY key")
    # a rank met twice counts once; a key with no rank has no row
    assert got == [(1, "0, 2-4, 7"), (2, "5")]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=30))
@pytest.mark.slow
def test_rank_ranges_write_ranks_as_the_job_summary_lines_do(con, ranks):
    # two writers of one notation (SQL for the rules' subjects, Python for the summary lines and problems)
    values = ", ".join(f"(1, {r})" for r in ranks)
    got = rows(con, f"WITH s AS (SELECT * FROM (VALUES {values}) t(key, rank)) SELECT ranks FROM _rank_ranges(s)")
    assert got == [(ranks_text(sorted(set(ranks))),)]
