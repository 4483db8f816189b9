"""JSON text written by orjson is json.dumps's, byte for byte (analyzer/report/json_text.py): diagnosis.json's
indented form on every example and on documents of any text and numbers, the charts' compact form or None."""

from __future__ import annotations

import datetime
import decimal
import enum
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import analyzer
from analyzer.report import json_text
from analyzer.report.json_export import diagnosis_dict, fixed
from analyzer.report.json_text import compact_json, indented_json

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(json_text.orjson is None, reason="orjson is not installed: json.dumps writes alone")

_LEAVES = st.none() | st.booleans() | st.text() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
_DOCS = st.recursive(_LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4))


def _dumps(doc) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def _plotly(value) -> str:
    """What report/plain_figure.py's figure_json writes without orjson: NaN and infinity made null."""
    text = json.dumps(value, separators=(",", ":"))
    return json.dumps(json.loads(text, parse_constant=lambda _: None), separators=(",", ":"))


class _Colour(enum.Enum):
    RED = 1


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(_DOCS)
def test_an_indented_document_of_rounded_numbers_is_json_dumps_text(doc):
    rounded = fixed(doc)  # what diagnosis.json holds: floats rounded, NaN and infinity None, str keys
    try:
        expected = _dumps(rounded)
    except UnicodeEncodeError:  # pragma: no cover (json.dumps does not encode)
        return
    assert indented_json(rounded) == expected


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(_DOCS)
def test_compact_text_is_json_dumps_text_or_left_to_it(doc):
    fast = compact_json(doc)
    assert fast is None or fast == _plotly(doc)


def test_what_orjson_writes_otherwise_goes_to_json_dumps():
    doc = {
        "tiny": 5e-05,  # (compact: Python writes 5e-05, orjson 0.00005)
        "big": 2**70,
        "when": datetime.date(2025, 1, 1),
        "decimal": decimal.Decimal("1.5"),
        "numpy": np.float64(0.25),
    }
    for key, value in doc.items():
        assert compact_json({key: value}) is None, key
    doc["colour"] = _Colour.RED  # orjson writes its value, json str(): fixed() makes it str() first
    assert indented_json(fixed(doc)) == _dumps(fixed(doc))
    assert compact_json({"name": "卷积", "x": [1.5]}) is None  # json escapes what is not ASCII; orjson does not


@pytest.mark.slow  # a whole command or process: the full suite runs it
@pytest.mark.parametrize("example", ["batch_sweep", "job_slow_rank"])
def test_every_example_diagnosis_is_written_by_orjson_as_json_dumps_writes_it(example):
    trace = analyzer.load(ROOT / "fixtures" / "examples" / example)
    for d in [*analyzer.diagnose_jobs(trace), *analyzer.diagnose_runs(trace)]:
        doc = diagnosis_dict(d)
        assert json_text.orjson.dumps(doc, option=json_text._OPTIONS).decode() == _dumps(doc), d.run_id
