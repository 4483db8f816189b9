"""Runs judged together (diagnose_many) get the diagnosis each gets alone, with a number of queries that does
not grow with the number of runs."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

import analyzer
from analyzer.diagnosis import diagnose, diagnose_many
from analyzer.rule_engine.loader import default_rules_dir, load_rules
from analyzer.rule_engine.model import ConfiguredRules
from analyzer.rule_engine.set_query import for_every_run
from fixtures.generator import write_export
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan
from fixtures.logs.failed_op import write_failed_op


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> analyzer.Trace:
    """Runs of both layouts, with memory records, an ingest problem, CANN logs naming a failed task and a
    job's ranks, in one connection."""
    tree = tmp_path_factory.mktemp("runs")
    write_export("mte_bound_conv", tree / "msprof", layout="msprof", seed=5)
    _spoil_a_duration(write_export("comm_not_overlapped", tree / "torch", seed=9)[0])
    write_export("near_oom", tree / "oom", seed=4)
    write_job(job_plan("job_slow_rank", ranks=4, seed=3), tree, kernels=12)
    write_failed_op(tree, seed=5)
    return analyzer.load(tree)


def _spoil_a_duration(root: Path) -> None:
    """One more kernel row, its duration not a number: an ingest problem of the run."""
    kernels = next(root.rglob("kernel_details.csv"))
    header, first = kernels.read_text().splitlines()[:2]
    cells = first.split(",")
    cells[header.split(",").index("Duration(us)")] = "oops"
    with kernels.open("a") as out:
        out.write(",".join(cells) + "\n")


def _rules() -> ConfiguredRules:
    return ConfiguredRules(tuple(load_rules(default_rules_dir())))


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_each_run_judged_with_the_others_is_judged_as_alone(trace):
    runs = trace.usable_run_ids()
    assert len(runs) >= 8
    together = diagnose_many(trace.con, runs, _rules())
    assert [d.run_id for d in together] == runs
    assert any(d.findings for d in together) and any(d.summary.memory for d in together)
    assert any(d.failed_operators for d in together) and any(d.problems for d in together)
    for d in together:
        assert d == diagnose(trace.con, d.run_id, _rules()), d.run_id


def _statements(con: duckdb.DuckDBPyConnection, runs: list[str]) -> list[str]:
    """The text of every statement diagnose_many sends to ``con`` for ``runs``."""
    con.execute("CALL truncate_duckdb_logs()")
    diagnose_many(con, runs, _rules())
    return [m for (m,) in con.execute("SELECT message FROM duckdb_logs WHERE type = 'QueryLog'").fetchall()]


@pytest.mark.slow  # two traces diagnosed with the query log on: the full suite, not the fast loop
def test_the_queries_do_not_grow_with_the_runs(trace):
    """Judging 4 ranks of a job sends the very statements that judging 2 of them sends (rule queries, evidence,
    summaries); over all the runs, each rule's query is sent at most once."""
    runs, rules = trace.usable_run_ids(), _rules().rules
    ranks = [r for r in runs if r.startswith("rank")]
    assert len(ranks) == 4
    diagnose_many(trace.con, runs, _rules())  # the helper views made first: not part of the count
    trace.con.execute("CALL enable_logging('QueryLog')")
    try:
        few, many, every = (_statements(trace.con, some) for some in (ranks[:2], ranks, runs))
    finally:
        trace.con.execute("CALL disable_logging()")
    assert sorted(few) == sorted(many)
    sent = [sum(for_every_run(r.sql) in s or r.sql.strip() in s for s in every) for r in rules]
    assert max(sent) == 1 and sum(sent) >= 10
