"""The job page opened in a real headless Chromium: no JS errors, every job chart drawn, the findings shown."""

from __future__ import annotations

import json

import pytest

from analyzer.cli import main
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan
from tests.headless_chromium import FIRST_FINDING_TOP_JS, open_and_wait

pytestmark = pytest.mark.browser


def test_job_page_pipeline_job_draws_every_chart_without_errors(browser, tmp_path):
    root = write_job(job_plan("job_pipeline_imbalance", 16, 6, 2), tmp_path / "in")
    assert main(["diagnose", str(root), "--out", str(tmp_path / "out"), "--format", "json,html"]) == 0
    folder = tmp_path / "out" / "job_pipeline_imbalance"
    open_and_wait(browser, folder / "job.html")
    assert browser.execute_script("return window.__errors") == []
    ids = browser.execute_script("return Array.from(document.querySelectorAll('.plotly-graph-div')).map(e => e.id)")
    assert ids == ["job-rank-step", "job-wait-transit", "job-links", "job-stages"]
    text = browser.execute_script("return document.body.innerText")
    finding = json.loads((folder / "diagnosis.json").read_text())["findings"][0]
    assert finding["code"] in text and finding["subject"] in text
    top = browser.execute_script(FIRST_FINDING_TOP_JS, "#finding-1")  # the window is 1400 px wide
    assert top is not None and top < 700  # the verdict first: the finding, not the job's metadata
