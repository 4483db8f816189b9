"""Jobs among many reports: index.html links each job page with its top finding; `runs --jobs` lists them."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from analyzer.cli import main
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan


@pytest.fixture(scope="module")
def two_jobs(tmp_path_factory) -> Path:
    """A tree holding two jobs of different world sizes: a slow rank among 8, a slow link among 16."""
    root = tmp_path_factory.mktemp("tree") / "in"
    write_job(job_plan("job_slow_rank", 8, 61, 2), root)
    write_job(job_plan("job_slow_link", 16, 62, 2), root)
    return root


def _index_rows(index: Path) -> list[tuple[str, str, str]]:
    body = index.read_text().split("<tbody>")[1].split("</tbody>")[0]
    return [
        (m.group(1), m.group(2), re.sub(r"<[^>]+>", "", m.group(3)))
        for m in re.finditer(
            r'<tr[^>]*><td><a href="([^"]+)">[^<]*</a></td><td class="path">[^<]*</td><td>([^<]*)</td>.*?<td>(.*?)</td>'
            r'<td class="num">[^<]*</td></tr>',
            body,
        )
    ]


@pytest.mark.slow
def test_index_links_each_job_page_with_its_top_finding(two_jobs, tmp_path):
    out = tmp_path / "out"
    main(["diagnose", str(two_jobs), "--out", str(out), "--format", "json,html", "--quiet"])
    rows = _index_rows(out / "index.html")
    assert [(href, kind) for href, kind, _ in rows] == [
        ("job_slow_link/job.html", "job (all ranks)"),
        ("job_slow_rank/job.html", "job (all ranks)"),
    ]
    for href, _, top in rows:
        assert (out / href).is_file()
        first = json.loads((out / href).with_name("diagnosis.json").read_text())["findings"][0]
        assert top.startswith(f"{first['severity']} {first['code']} ") and first["subject"] in top.replace(
            "&lt;", "<"
        ).replace("&gt;", ">")
    assert "2 job(s), 0 run(s)" in (out / "index.html").read_text()


def test_index_lists_the_job_above_its_ranks_on_the_real_two_rank_job(tmp_path, real_dir):
    """The job's row above its ranks' rows, though its ranks each have a finding and the job none (its two ranks
    of eight cannot name a late rank); the ranks worst first."""
    job = tmp_path / "job"
    for rank in (0, 1):
        shutil.copytree(real_dir / f"torch_npu_level1_rank{rank}_text", job / f"rank{rank}")
    out = tmp_path / "out"
    main(["diagnose", str(job), "--out", str(out), "--format", "json,html", "--quiet"])
    rows = _index_rows(out / "index.html")
    assert [(href, kind) for href, kind, _ in rows] == [
        ("job/job.html", "job (all ranks)"),
        ("rank0/report.html", "run"),
        ("rank1/report.html", "run"),
    ]


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_runs_jobs_lists_the_catalogued_jobs_with_their_top_finding(two_jobs, tmp_path, capsys):
    catalog = tmp_path / "catalog.duckdb"
    assert main(["batch", str(two_jobs), "--catalog", str(catalog), "--jobs", "1"]) == 0
    capsys.readouterr()
    assert main(["runs", str(catalog), "--jobs"]) == 0  # into a pipe (captured): TSV
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"), strict=True)) for line in lines[1:]]
    assert [(r["path"], r["rank_count"], r["top_rule"]) for r in rows] == [
        ("job_slow_link", "16", "slow-link"),
        ("job_slow_rank", "8", "slow-rank"),
    ]
    assert rows[0]["top_subject"] == "rank 7 <-> rank 8 (RDMA)"
    assert main(["runs", str(catalog), "--jobs", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [j["job_id"].split("@")[0] for j in listed] == ["job_slow_link", "job_slow_rank"]
    assert all(j["step_count"] == 2 and j["finding_count"] >= 1 for j in listed)
