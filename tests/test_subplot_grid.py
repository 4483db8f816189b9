"""The panels' layout computed without plotly (analyzer/report/subplot_grid.py) is plotly's ``make_subplots``
layout, key for key and float for float, and a run page is drawn without importing plotly's figure classes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from analyzer.report.memory_charts import stacked_layout
from analyzer.report.subplot_grid import grid_layout

ROOT = Path(__file__).resolve().parents[1]


def _plotly(**grid) -> dict:
    layout = make_subplots(**grid, figure=go.Figure(layout={"template": "none"})).layout.to_plotly_json()
    layout.pop("template", None)
    return layout


GRIDS = [
    {"rows": rows, "cols": cols, "shared_xaxes": sx, "shared_yaxes": sy, "vertical_spacing": vs}
    for rows, cols in [(1, 1), (1, 2), (1, 3), (1, 7), (2, 2), (3, 1), (4, 1), (5, 3)]
    for sx, sy in [(False, False), (True, False), (False, True), (True, True)]
    for vs in (None, 0.07)
]


@pytest.mark.parametrize("grid", GRIDS, ids=lambda g: "-".join(str(v) for v in g.values()))
def test_a_grid_is_laid_out_as_plotly_lays_it_out(grid):
    # some panels untitled: plotly writes no annotation for them
    titles = tuple(f"panel {i}" if i % 3 != 1 else "" for i in range(grid["rows"] * grid["cols"]))
    assert json.dumps(grid_layout(**grid, subplot_titles=titles)) == json.dumps(_plotly(**grid, subplot_titles=titles))
    spaced = {**grid, "horizontal_spacing": 0.05}
    assert json.dumps(grid_layout(**spaced, subplot_titles=titles)) == json.dumps(
        _plotly(**spaced, subplot_titles=titles)
    )


def test_the_run_pages_stacked_chart_is_plotlys():
    titles = [a["text"] for a in stacked_layout()["annotations"]]
    expected = _plotly(rows=4, cols=1, shared_xaxes=True, vertical_spacing=0.07, subplot_titles=titles)
    assert json.dumps(stacked_layout()) == json.dumps(expected)


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_a_run_page_is_drawn_without_plotlys_figure_classes(tmp_path):
    args = ["diagnose", "fixtures/examples/resnet_host_sync", "--format", "html", "--out", str(tmp_path), "--quiet"]
    code = f"import sys; from analyzer.cli import main; print(main({args!r}), 'plotly.graph_objs' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.split()[-2:] == ["0", "False"]
    assert "Compute busy" in next(tmp_path.glob("*/report.html")).read_text(encoding="utf-8")
