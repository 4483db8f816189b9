"""The executor benchmark row: both executors really run, and the row lands between its markers only once."""

from __future__ import annotations

import pytest

from bench.executor_row import END, START, write_section
from tests.real_process_fixtures import NEEDS_DASK


def test_write_section_replaces_its_markers_and_keeps_the_rest(tmp_path):
    doc = tmp_path / "benchmark.md"
    doc.write_text("# Benchmarks\n\n<!-- bench:start -->\nother row\n<!-- bench:end -->\n")
    write_section(doc, f"{START}\nfirst\n{END}\n")
    write_section(doc, f"{START}\nsecond\n{END}\n")
    text = doc.read_text()
    assert text.count(START) == 1 and "second" in text and "first" not in text
    assert "<!-- bench:start -->\nother row\n<!-- bench:end -->" in text


@pytest.mark.slow
@NEEDS_DASK
def test_executor_row_measures_both_executors_and_writes_the_row(tmp_path):
    from bench.batch_archive import executor_row

    doc = tmp_path / "benchmark.md"
    assert executor_row(runs=4, workers=2, repeat=1, doc=doc) == 0
    rows = [line for line in doc.read_text().splitlines() if line.startswith(("| local pool |", "| dask |"))]
    assert len(rows) == 2 and all(float(r.split("|")[2]) > 0 and float(r.split("|")[4]) > 0 for r in rows)
