"""The library API (``import analyzer``): the README's example runs, and the CLI writes what it writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

import analyzer
from analyzer.cli import main
from analyzer.report.plotly_asset import plotly_file_name

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "fixtures" / "examples" / "resnet_host_sync"
START, END = "<!-- api-example:start -->\n```python\n", "```\n<!-- api-example:end -->"


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert START in text and END in text, "README.md lacks the API example between its markers"
    return text.split(START, 1)[1].split(END, 1)[0]


@pytest.mark.slow  # writes all three reports: the full suite, not the fast loop
def test_readme_example_runs_as_written(tmp_path):
    code = _readme_example()
    assert len(code.strip().splitlines()) <= 6  # the import, a blank line and five lines
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "SCH001" in done.stdout and "impact_us" in done.stdout
    written = sorted(p.name for p in (tmp_path / "reports").rglob("*") if p.is_file())
    # plotly.js is written once per output folder, beside the run folders (report/plotly_asset.py)
    assert written == sorted(["diagnosis.json", "diagnosis.md", "report.html", plotly_file_name()])


@pytest.mark.slow  # a whole command: the full suite runs it
def test_api_reports_equal_the_command_line_ones(tmp_path):
    assert main(["diagnose", str(EXAMPLE), "--out", str(tmp_path / "cli"), "--format", "json,md"]) == 0
    with analyzer.load(EXAMPLE) as trace:
        paths = analyzer.report(analyzer.diagnose(trace), tmp_path / "api")
    assert paths
    for path in paths:
        assert path.read_bytes() == (tmp_path / "cli" / path.relative_to(tmp_path / "api")).read_bytes()


def test_trace_gives_arrow_and_polars_tables():
    with analyzer.load(EXAMPLE) as trace:
        ops = trace.table("ops")
        assert isinstance(ops, pl.DataFrame) and ops.height == 144
        counted = trace.query("SELECT count(*) AS n FROM ops WHERE run_id = $r", {"r": trace.run_ids[0]})
        assert isinstance(counted, pa.Table) and counted.to_pylist() == [{"n": 144}]
        with pytest.raises(KeyError, match="no normalized table"):
            trace.table("nope")


@pytest.mark.slow
def test_diagnose_asks_for_a_run_when_there_are_several():
    with analyzer.load(ROOT / "fixtures" / "examples" / "cann_upgrade") as trace:
        with pytest.raises(ValueError, match="name one run_id of the 3 usable runs"):
            analyzer.diagnose(trace)
        found = analyzer.diagnose_all(trace)
        assert [d.run_id for d in found] == trace.usable_run_ids()
        table = analyzer.findings_table(found[0])
        assert table.height == len(found[0].findings) > 0


@pytest.mark.slow
def test_api_arguments_are_checked_as_the_command_line_checks_them(tmp_path):
    """Issue 45: a run that is not there, params of an unknown rule or None, HTML without the trace."""
    from analyzer.rule_engine.params import ParamError

    with analyzer.load(EXAMPLE) as trace:
        with pytest.raises(ValueError, match="no usable run 'nope' in the trace; its usable runs: "):
            analyzer.diagnose(trace, "nope")
        with pytest.raises(ParamError, match="unknown rule 'no-such-rule'"):
            analyzer.diagnose(trace, params={"no-such-rule": {"x": 1}})
        with pytest.raises(ParamError, match=r"inter-op-gap.min_share=None: expected a value like 0.05"):
            analyzer.diagnose_all(trace, params={"inter-op-gap": {"min_share": None}})
        d = analyzer.diagnose(trace)
    with pytest.raises(ValueError, match="the HTML report needs the trace"):
        analyzer.report(d, tmp_path / "out", ("json", "md", "html"))
    assert not (tmp_path / "out").exists()  # nothing written before the refusal
