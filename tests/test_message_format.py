"""Findings' messages: a number that rounds to zero reads as zero, never as a negative zero."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.rule_engine.message_format import fill_template

EXAMPLE_JOB = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "job_slow_rank"


@pytest.mark.parametrize(
    ("template", "value", "text"),
    [
        ("{v:+.1f} ms", -0.04, "+0.0 ms"),
        ("{v:.1f}", -0.04, "0.0"),
        ("{v:.0%}", -0.004, "0%"),
        ("{v:,.3f}", -0.0, "0.000"),
        ("{v}", -0.0, "0.0"),
    ],
)
def test_message_number_rounding_to_zero_has_no_minus(template, value, text):
    assert fill_template(template, {"v": value}) == text


@pytest.mark.parametrize(
    ("template", "value", "text"),
    [("{v:+.1f} ms", -0.05, "-0.1 ms"), ("{v:.1f}", -0.25, "-0.2"), ("{v:.0%}", -0.006, "-1%"), ("{v}", -3, "-3")],
)
def test_message_negative_number_keeps_its_minus(template, value, text):
    assert fill_template(template, {"v": value}) == text


def test_message_template_errors_are_str_format_s():
    with pytest.raises(KeyError):
        fill_template("{missing}", {})
    with pytest.raises(ValueError):
        fill_template("{v:d}", {"v": 1.5})


@pytest.mark.slow
def test_message_of_the_example_job_says_plus_zero_where_its_slow_rank_is_not_host_bound(tmp_path):
    # rank 2's free + preparing time is a few us below its peers' median: "+0.0 ms", as its computing "+17.7"
    assert main(["diagnose", str(EXAMPLE_JOB), "--out", str(tmp_path), "--format", "json"]) == 0
    job = json.loads((tmp_path / "job_slow_rank" / "diagnosis.json").read_text())
    (message,) = [f["message"] for f in job["findings"] if f["code"] == "JOB001"]
    assert "free and preparing +0.0 ms" in message, message
    assert "-0.0" not in message
