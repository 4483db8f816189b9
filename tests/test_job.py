"""Multi-rank jobs end to end: generated jobs with a planted problem, the real two-rank job, bad rank files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analyzer.cli import main
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan

# scenario -> (rule named first, how the truth names its subject)
_PLANTED = {
    "job_slow_rank": ("slow-rank", lambda t: f"rank {t['slow_rank']}"),
    "job_slow_rank_host": ("slow-rank", lambda t: f"rank {t['slow_rank']}"),
    "job_slow_link": ("slow-link", lambda t: f"rank {t['slow_link'][0]} <-> rank {t['slow_link'][1]} (RDMA)"),
    "job_pipeline_imbalance": ("pipeline-stage-imbalance", lambda t: f"stage {t['slow_stage']} "),
}


def _diagnose_job(root: Path, out: Path, *extra: str) -> tuple[int, dict]:
    code = main(["diagnose", str(root), "--out", str(out), "--format", "json", *extra])
    jobs = [json.loads(p.read_text()) for p in sorted(out.glob("*/diagnosis.json"))]
    jobs = [d for d in jobs if d["run"].get("scope") == "job"]
    assert len(jobs) == 1, [d["run_id"] for d in jobs]
    return code, jobs[0]


@pytest.mark.slow
@pytest.mark.parametrize("scenario", sorted(_PLANTED))
@pytest.mark.parametrize(("seed", "ranks"), [(0, 16), pytest.param(7, 24, marks=pytest.mark.slow)])
def test_job_generated_planted_problem_is_named_first(tmp_path, scenario, seed, ranks):
    root = write_job(job_plan(scenario, ranks, seed, 2), tmp_path / "in")
    truth = json.loads((root / "job_truth.json").read_text())
    _, d = _diagnose_job(root, tmp_path / "out")
    rule, subject = _PLANTED[scenario]
    first = d["findings"][0]
    assert (first["rule"], first["severity"]) == (rule, "warning")
    assert first["subject"].startswith(subject(truth)), first["subject"]
    if scenario.startswith("job_slow_rank"):
        assert first["message"].split("Cause: ")[1].startswith(truth["slow_cause"])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 3])
def test_job_balanced_has_no_job_warning_and_lists_every_summary_only_rank(tmp_path, seed):
    root = write_job(job_plan("job_balanced", 12, seed, 2), tmp_path / "in")
    code, d = _diagnose_job(root, tmp_path / "out")
    assert code == 0
    assert [f for f in d["findings"] if f["severity"] != "info"] == []
    assert [r["rank"] for r in d["run"]["ranks"]] == list(range(12))
    assert not any(r["has_kernels"] for r in d["run"]["ranks"])
    assert d["summary"]["aligned_op_multi_rank_count"] == d["summary"]["aligned_op_count"] == 8
    assert (tmp_path / "out" / "job_balanced" / "job.html").exists() is False  # json only was asked


@pytest.fixture(scope="module")
def pipeline_page(tmp_path_factory) -> str:
    """The job page of a generated 8-rank pipeline-imbalance job, written once for the tests that read it."""
    tmp = tmp_path_factory.mktemp("pipeline")
    root = write_job(job_plan("job_pipeline_imbalance", 8, 1, 2), tmp / "in")
    main(["diagnose", str(root), "--out", str(tmp / "out"), "--format", "json,html"])
    return (tmp / "out" / "job_pipeline_imbalance" / "job.html").read_text()


@pytest.mark.slow
def test_job_page_draws_the_job_charts(pipeline_page):
    page = pipeline_page
    for div in ("job-rank-step", "job-wait-transit", "job-links", "job-stages"):
        assert f'id="{div}"' in page
    assert "JOB003" in page and "stage 1 (ranks 2-3)" in page


def test_job_page_finding_links_the_chart_its_rule_names_and_lists_the_job_rules(pipeline_page):
    page = pipeline_page
    finding = page[page.index('id="finding-1"') : page.index("</section>", page.index('id="finding-1"'))]
    assert "JOB003" in finding and 'href="#job-stages"' in finding  # pipeline-stage-imbalance: [report] chart
    assert "ms per step</b>" in finding  # a job finding's impact is per step
    assert '<details id="completeness"' in page and "pipeline-stage-imbalance" in page


def test_job_links_use_global_ranks_from_the_metadata_groups(tmp_path, con):
    from analyzer.ingest.metadata.discover import discover
    from analyzer.job.grouping import find_jobs
    from analyzer.job.tables import load_job

    root = write_job(job_plan("job_pipeline_imbalance", 8, 2, 1), tmp_path)
    job = find_jobs(con, discover(root), root)[0]
    load_job(con, job)
    stages = con.execute("SELECT rank, pp_stage FROM job_ranks ORDER BY rank").fetchall()
    assert stages == [(r, r // 2) for r in range(8)]
    # The dp group of stage 1 is ranks 2-3: its matrix rows name them, not group-local 0-1.
    links = con.execute(
        "SELECT DISTINCT src_rank, dst_rank FROM job_links WHERE op_kind = 'collective' AND reported_by = 3 "
        "AND transport <> 'LOCAL'"
    ).fetchall()
    assert links == [(3, 2)]
    kinds = dict(con.execute("SELECT group_name, any_value(group_kind) FROM job_groups GROUP BY ALL").fetchall())
    assert sorted(set(kinds.values())) == ["default", "dp", "pp"]


@pytest.mark.slow
def test_job_unreadable_rank_file_is_named_and_the_rest_is_judged(tmp_path):
    root = write_job(job_plan("job_slow_rank", 8, 5, 2), tmp_path / "in")
    truth = json.loads((root / "job_truth.json").read_text())
    broken = next(p for p in sorted(root.glob("rank0_*/ASCEND_PROFILER_OUTPUT/communication.json")))
    broken.write_text(broken.read_text()[:200])
    code, d = _diagnose_job(root, tmp_path / "out")
    assert code == 3
    assert any(
        p["file"].endswith("rank0_20250101000000000_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json")
        and p["severity"] == "error"
        for p in d["ingest_problems"]
    )
    assert len(d["run"]["ranks"]) == 8
    assert d["findings"][0]["subject"] == f"rank {truth['slow_rank']}"


def test_job_real_two_rank_job_reads_both_ranks_and_aligns_collectives(tmp_path, real_dir):
    job = tmp_path / "job"
    for rank in (0, 1):
        shutil.copytree(real_dir / f"torch_npu_level1_rank{rank}_text", job / f"rank{rank}")
    code, d = _diagnose_job(job, tmp_path / "out")
    assert [(r["rank"], r["rank_source"], r["has_kernels"]) for r in d["run"]["ranks"]] == [
        (0, "profiler_info", True),
        (1, "profiler_info", True),
    ]
    assert d["summary"]["aligned_op_count"] == d["summary"]["aligned_op_multi_rank_count"] == 4
    assert d["summary"]["job_step_us"] == pytest.approx(136581.0)
    # Rank 1 reaches the first all-reduce 5.6 ms after rank 0: the data's answer, under slow-rank's threshold.
    assert d["summary"]["most_waited_for_rank"] == 1
    assert d["summary"]["caused_wait_per_step_us"] == pytest.approx(5760, abs=20)
    assert "inferred" in d["run"]["groups"]
    assert (tmp_path / "out" / "rank0" / "diagnosis.json").exists()
    assert (tmp_path / "out" / "rank1" / "diagnosis.json").exists()


def test_job_comm_group_ids_of_the_real_llm_rank_are_its_metadata_keys(real_dir):
    from analyzer.job.group_hash import comm_group_id

    rank = real_dir / "torch_npu_llm_cann83_rank0"
    keys = json.loads((rank / "profiler_metadata.json").read_text())["parallel_group_info"]
    by_id = {comm_group_id(k): v["group_name"] for k, v in keys.items()}
    comm = json.loads((rank / "ASCEND_PROFILER_OUTPUT" / "communication.json").read_text())
    named = {op.rpartition("@")[2] for step in comm.values() for kind in step.values() for op in kind if "@" in op}
    assert {by_id[g] for g in named} == {"default_group", "dp_cp", "mp", "pp", "embd"}


@pytest.mark.slow
def test_job_batch_leaves_summary_only_job_ranks_out_instead_of_failing_them(tmp_path):
    root = write_job(job_plan("job_balanced", 4, 0, 1), tmp_path / "in")
    catalog = tmp_path / "catalog.duckdb"
    assert main(["batch", str(root.parent), "--catalog", str(catalog), "--jobs", "1"]) == 0
    import duckdb

    con = duckdb.connect(str(catalog), read_only=True)
    assert con.execute("SELECT count(*) FROM failures").fetchall() == [(0,)]
    assert con.execute("SELECT count(*) FROM catalog_runs").fetchall() == [(0,)]
    assert con.execute("SELECT rank_count FROM catalog_jobs").fetchall() == [(4,)]


@pytest.mark.slow
def test_job_batch_catalogs_the_job_and_its_findings_once(tmp_path):
    import duckdb

    root = write_job(job_plan("job_slow_rank", 6, 2, 2), tmp_path / "in")
    truth = json.loads((root / "job_truth.json").read_text())
    catalog = tmp_path / "catalog.duckdb"
    for _ in range(2):  # the second batch finds the job known
        assert main(["batch", str(root.parent), "--catalog", str(catalog), "--jobs", "1"]) == 0
    con = duckdb.connect(str(catalog), read_only=True)
    assert con.execute("SELECT path, rank_count, summary_only_rank_count FROM catalog_jobs").fetchall() == [
        ("job_slow_rank", 6, 6)
    ]
    assert con.execute("SELECT position, rule, subject FROM job_findings").fetchall()[0] == (
        1,
        "slow-rank",
        f"rank {truth['slow_rank']}",
    )
    assert con.execute("SELECT count(*) FROM job_rank_metrics").fetchall() == [(6,)]


@pytest.mark.slow
def test_job_diff_names_the_slowed_link_and_the_step_regression(tmp_path):
    base = write_job(job_plan("job_balanced", 16, 4, 2), tmp_path / "a")
    new = write_job(job_plan("job_slow_link", 16, 4, 2), tmp_path / "b")
    truth = json.loads((new / "job_truth.json").read_text())
    out = tmp_path / "diff.json"
    assert main(["diff", str(base), str(new), "--json", str(out), "--fail-on-regression", "5"]) == 1
    d = json.loads(out.read_text())
    assert d["job_step_delta_pct"] > 5
    a, b = truth["slow_link"]
    assert (d["links"][0]["rank_a"], d["links"][0]["rank_b"], d["links"][0]["transport"]) == (a, b, "RDMA")
    assert d["links"][0]["delta_pct"] == pytest.approx(-75.0, abs=0.5)
    assert all(abs(ln["delta_pct"]) >= 1 for ln in d["links"])


def test_job_real_rank_with_summaries_only_takes_part(tmp_path, real_dir):
    """Rank 1 of the real job cut down to its summaries: it is in the job, not a run of its own."""
    job = tmp_path / "job"
    shutil.copytree(real_dir / "torch_npu_level1_rank0_text", job / "rank0")
    src, dst = real_dir / "torch_npu_level1_rank1_text", job / "rank1"
    (dst / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    shutil.copy(src / "profiler_info_1.json", dst)
    for name in ("step_trace_time.csv", "communication.json", "communication_matrix.json"):
        shutil.copy(src / "ASCEND_PROFILER_OUTPUT" / name, dst / "ASCEND_PROFILER_OUTPUT")
    code, d = _diagnose_job(job, tmp_path / "out")
    # rank 0's matrix sends 61 MB to each of ranks 1-7 over HCCS: the job has 8 ranks, 6 of them not here
    assert code == 3
    assert [p["problem"].split(";")[0] for p in d["ingest_problems"] if p["severity"] == "error"] == [
        "6 of the 8 ranks the job implies (its metadata groups and matrices) have no export here: rank(s) 2-7"
    ]
    assert [(r["rank"], r["has_kernels"]) for r in d["run"]["ranks"]] == [(0, True), (1, False)]
    assert d["summary"]["aligned_op_multi_rank_count"] == 4
    assert (tmp_path / "out" / "rank0" / "diagnosis.json").exists()
    assert not (tmp_path / "out" / "rank1").exists()


@pytest.mark.slow
def test_job_tables_are_kept_in_the_db_of_diagnose(tmp_path):
    import duckdb

    root = write_job(job_plan("job_balanced", 4, 1, 1), tmp_path / "in")
    db = tmp_path / "tables.duckdb"
    assert main(["diagnose", str(root), "--db", str(db), "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM job_ranks WHERE run_id = 'job_balanced'").fetchall() == [(4,)]
    assert con.execute("SELECT count(DISTINCT rank) FROM job_comm_ops").fetchall() == [(4,)]


def test_job_ingest_writes_the_job_tables_of_a_summaries_only_job(tmp_path):
    import duckdb

    root = write_job(job_plan("job_slow_link", 16, 2, 1), tmp_path / "in")
    db = tmp_path / "tables.duckdb"
    assert main(["ingest", str(root), "--db", str(db)]) == 0
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM job_ranks").fetchall() == [(16,)]
    assert con.execute("SELECT count(*) FROM job_links WHERE src_rank IS NULL").fetchall() == [(0,)]
