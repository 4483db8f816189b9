"""One generated run written as text and as SQLite holds the same steps and gets the same findings: the seed
describes one run, whatever the form (torch_npu's DB form carries the steps' decomposition in analysis.db, as
step_trace_time.csv does; msprof's DB form, like its text form, knows no steps outside graph mode)."""

from __future__ import annotations

from pathlib import Path

import pytest

import analyzer
from fixtures.generator import write_export

_STEPS = "SELECT * EXCLUDE (run_id, source) FROM steps ORDER BY step_id"  # source: the file it came from


def _read(root: Path) -> tuple[list[tuple], dict[str, float]]:
    with analyzer.load(root) as trace:
        steps = trace.con.execute(_STEPS).fetchall()
        found = analyzer.diagnose(trace).findings
    return steps, {f.code: round(f.impact_us, 3) for f in found if f.code in ("SCH001", "CMP001")}


# the reported case in the fast loop; msprof's in the full suite
@pytest.mark.parametrize("layout", ["torch_npu", pytest.param("msprof", marks=pytest.mark.slow)])
def test_text_and_db_forms_of_one_seed_hold_the_same_steps_and_amounts(tmp_path: Path, layout: str) -> None:
    got = {}
    for form in ("text", "db"):
        (root,) = write_export(
            "host_sync_low_util", tmp_path / form, layout=layout, export_type=form, seed=515, steps=3, layers=4
        )
        got[form] = _read(root)
    assert got["text"] == got["db"]
    steps, amounts = got["db"]
    assert set(amounts) == {"SCH001", "CMP001"}
    assert len(steps) == (3 if layout == "torch_npu" else 0)
