"""A diagnosis's findings as a polars frame, one row each: what a notebook filters and sorts."""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import TYPE_CHECKING

from analyzer.diagnosis_model import Diagnosis
from analyzer.rule_engine.model import Finding

if TYPE_CHECKING:
    import polars as pl

# The columns a reader looks at first, and last (a wide frame prints its first and last columns); the
# finding's other scalar fields in between, in their own order.
_FIRST = ("code", "severity", "subject", "impact_us", "span_share", "message")
_LAST = ("value", "threshold", "rule", "confidence")
_LEFT_OUT = ("evidence", "evidence_columns", "details", "advice_steps")
_NUMBERS = ("impact_us", "span_share", "value", "threshold")


def findings_table(diagnosis: Diagnosis) -> pl.DataFrame:
    """The ranked findings as a polars DataFrame, a row each in rank order (evidence, details and advice
    steps left out: ``diagnosis.findings[i]`` has them). ``.to_arrow()`` gives an Arrow table."""
    import polars  # loads only when a table is asked for (the commands never ask)

    middle = [f.name for f in fields(Finding) if f.name not in _FIRST + _LAST + _LEFT_OUT]
    names = [*_FIRST, *middle, *_LAST]
    schema = {n: polars.Float64 if n in _NUMBERS else polars.String for n in names}
    rows = [{k: v for k, v in asdict(f).items() if k in schema} for f in diagnosis.findings]
    return polars.DataFrame(rows, schema=schema)
