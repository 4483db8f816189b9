"""The run summary and the time breakdown are frozen dataclasses whose fields are those of the shipped JSON schema."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from analyzer.diagnosis_model import BreakdownPart, Diagnosis, RunsSummary, RunSummary, TimeBreakdown
from analyzer.report.json_export import diagnosis_dict

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "docs" / "diagnosis.schema.json").read_text())
RUN, RUNS, _JOB = SCHEMA["properties"]["summary"]["oneOf"]  # a job's summary stays its SQL row
BREAKDOWN = RUN["properties"]["breakdown"]


def _fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize(
    ("cls", "schema"),
    [
        (RunSummary, RUN),
        (RunsSummary, RUNS),
        (TimeBreakdown, BREAKDOWN),
        (BreakdownPart, BREAKDOWN["properties"]["parts"]["items"]),
    ],
)
def test_fields_follow_the_schema(cls, schema):
    assert _fields(cls) == set(schema["properties"])
    assert set(schema["required"]) <= _fields(cls)


def test_the_summary_is_frozen_and_written_as_the_schema_says():
    part = BreakdownPart("computing", "computing", 6801.407, 22.5)
    breakdown = TimeBreakdown(30157.617, "steps", "step_trace", "3 steps", (part,), "computing 22.5%")
    summary = RunSummary(
        30157.617, 6801.407, 0.2255, 22.5, "steps", "step_trace", 31000.0, 0.2, 0.22, 2, 150.0, 3, 120, 90, breakdown,
        None,
    )  # fmt: skip
    with pytest.raises(dataclasses.FrozenInstanceError):
        summary.span_us = 0.0  # type: ignore[misc]
    written = _written(summary)
    assert written["breakdown"]["parts"][0] == {"part": "computing", "label": "computing", "us": 6801.407, "pct": 22.5}
    assert set(written) == set(RUN["properties"]) and _written(RunsSummary(3)) == {"run_count": 3}


def _written(summary: RunSummary | RunsSummary) -> dict:
    """The summary as diagnosis.json writes it."""
    return diagnosis_dict(Diagnosis("r", {}, summary, (), ()))["summary"]
