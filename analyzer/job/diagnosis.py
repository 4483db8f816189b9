"""Diagnose one job: fill its tables, run the job rules, gather the job summary and ranked findings."""

from __future__ import annotations

from dataclasses import asdict, replace

import duckdb

from analyzer.diagnosis_model import Diagnosis
from analyzer.duckdb_connect import fixed_order
from analyzer.ingest.model import Problem
from analyzer.job.damaged_evidence import mark_damaged
from analyzer.job.explained import job_explanations
from analyzer.job.fixed_order import job_rows
from analyzer.job.grouping import Job
from analyzer.rule_engine.impact_sharing import exclusive_job_impacts
from analyzer.rule_engine.model import ConfiguredRules, Finding, RuleOutcome
from analyzer.rule_engine.ranking import rank_findings
from analyzer.rule_engine.runner import build_views, run_rules, run_rules_alone
from analyzer.version import __version__

# One scan per table, the counts as FILTERs: DuckDB plans each scalar subquery on its own, which on a job's
# small tables costs more than the counting.
_SUMMARY = """
WITH s AS (SELECT step_id, max(stage_us) AS job_step_us, min(stage_us) AS fastest_us FROM job_steps
           WHERE run_id = $job GROUP BY step_id)
SELECT r.rank_count, r.summary_only_rank_count, r.rank_without_summaries_count, st.step_count, st.job_step_us,
       st.step_spread_us, c.aligned_op_count, c.aligned_op_multi_rank_count, l.link_row_count, r.pp_stage_count
FROM (SELECT count(*) AS rank_count, count(*) FILTER (WHERE NOT has_kernels) AS summary_only_rank_count,
             count(*) FILTER (WHERE NOT has_step_trace AND NOT has_communication) AS rank_without_summaries_count,
             count(DISTINCT pp_stage) AS pp_stage_count
      FROM job_ranks WHERE run_id = $job) r,
     (SELECT count(*) AS step_count, avg(job_step_us) AS job_step_us, avg(job_step_us - fastest_us) AS step_spread_us
      FROM s) st,
     (SELECT count(DISTINCT (step_id, group_name, op_name)) AS aligned_op_count,
             count(DISTINCT (step_id, group_name, op_name)) FILTER (WHERE op_rank_count >= 2)
                 AS aligned_op_multi_rank_count
      FROM job_comm_ops WHERE run_id = $job) c,
     (SELECT count(*) AS link_row_count FROM job_links WHERE run_id = $job) l
"""

# The rank the others waited for most (as the rule judging slow ranks counts it), whether or not it fires: what
# the job's collectives say even when no rank stands out.
_LATE = """
WITH per_op AS (
    SELECT step_id, arg_min(rank, (wait_us, rank)) AS rank,
           (sum(wait_us) - min(wait_us)) / (count(*) - 1) - min(wait_us) AS caused_us
    FROM job_comm_ops
    WHERE run_id = $job AND op_kind = 'collective' AND op_rank_count >= 2 AND wait_us IS NOT NULL
    GROUP BY step_id, group_name, op_name
)
SELECT rank AS most_waited_for_rank,
       sum(caused_us) / (SELECT count(DISTINCT step_id) FROM per_op) AS caused_wait_per_step_us
FROM per_op GROUP BY rank ORDER BY caused_wait_per_step_us DESC, rank LIMIT 1
"""

_RANKS = """
SELECT rank, rank_run_id, source_path, rank_source, pp_stage, has_kernels, has_step_trace, has_communication, has_matrix
FROM job_ranks WHERE run_id = $job ORDER BY rank
"""


Judged = tuple[list[Finding], list[RuleOutcome]]


def judge_jobs(con: duckdb.DuckDBPyConnection, configured: ConfiguredRules, job_ids: list[str]) -> dict[str, Judged]:
    """Per job of ``job_ids`` (their tables filled), what ``run_rules`` gives its job rules over it alone, in
    one pass: each rule's query runs once for all the jobs. {} (each job judged on its own by ``diagnose_job``)
    for fewer than two jobs, or when two share an id."""
    distinct = len(set(job_ids)) == len(job_ids)
    if len(job_ids) < 2 or not distinct:
        return {}
    job_rules = configured.where(lambda r: r.scope == "job")
    build_views(con, job_rules)  # on DuckDB's threads, as diagnose_job builds them
    with fixed_order(con):
        return run_rules_alone(con, job_rules, job_ids, views_built=True)


def diagnose_job(
    con: duckdb.DuckDBPyConnection,
    job: Job,
    group_note: str,
    problems: list[Problem],
    configured: ConfiguredRules,
    judged: Judged | None = None,
) -> Diagnosis:
    """The Diagnosis of a job whose tables are filled (analyzer.job.tables.load_job): the rules of scope
    'job' of ``configured`` over it (``judged``: their findings and outcomes, when ``judge_jobs`` judged it
    with other jobs), its ranks (each with what its export holds) and its summary numbers."""
    job_rules = configured.where(lambda r: r.scope == "job")
    # The helper tables hold every rank's rows (the ranks' own diagnoses read them next): built on DuckDB's
    # threads, as for any run, before the job's queries go to one thread (by judge_jobs when it judged the job).
    if judged is None:
        build_views(con, job_rules)
    with fixed_order(con):
        findings, outcomes = judged or run_rules(con, job_rules, [job.job_id], views_built=True)
        findings = exclusive_job_impacts(con, findings, list(job_rules.rules))
        findings = mark_damaged(findings, problems, job_rules.rules)
        summary = job_rows(con, _SUMMARY, job.job_id)[0]
        late = job_rows(con, _LATE, job.job_id)
        ranks = job_rows(con, _RANKS, job.job_id)
    summary.update(late[0] if late else {"most_waited_for_rank": None, "caused_wait_per_step_us": None})
    run = {
        "scope": "job",
        "job_id": job.job_id,
        "world_size": job.world_size,
        "groups": group_note,
        "ranks": ranks,
    }
    d = Diagnosis(
        run_id=job.job_id,
        run=run,
        summary=summary,
        outcomes=tuple(outcomes),
        findings=tuple(rank_findings(findings)),
        problems=tuple(asdict(p) for p in problems),
        params=job_rules.params_in_effect(),
        tool_version=__version__,
        rule_reports={r.name: r.report for r in job_rules.rules},
    )
    with fixed_order(con):
        # All the rules: the job rules' [explains] and the rank rules' [impact] waits (what part they can explain)
        return replace(d, explains=job_explanations(con, d, configured.rules))
