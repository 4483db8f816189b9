"""docs/api.md is what its generator writes from the docstrings today, and the notebook walk-through
(docs/api-walkthrough.ipynb) runs cell by cell, without Jupyter, giving what its text says."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import sys
from pathlib import Path

import polars as pl
import pytest

import analyzer
from analyzer.api import reference

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "api-walkthrough.ipynb"


def test_docs_api_md_is_current():
    assert reference.DOC.read_text(encoding="utf-8") == reference.render(), "run: python -m analyzer.api.reference"


def test_docs_api_md_documents_every_public_name():
    text = reference.DOC.read_text(encoding="utf-8")
    for name in analyzer.__all__:
        if name != "__version__":
            assert f"`{name}" in text or f"analyzer.{name}(" in text, name
    assert "### `Trace.breakdown(" in text and "### `Diff.types(" in text and "### `Job.ranks(" in text


def _run_cells(cells: list[dict]) -> list[tuple[str, object]]:
    """Each code cell executed in one namespace, in order: (what it printed, the value of its last expression)."""
    namespace: dict = {}
    results = []
    for n, cell in enumerate(c for c in cells if c["cell_type"] == "code"):
        tree = ast.parse("".join(cell["source"]))
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(tree, f"cell {n}", "exec"), namespace)  # noqa: S102 (the project's own notebook)
            value = eval(compile(ast.Expression(last.value), f"cell {n}", "eval"), namespace) if last else None  # noqa: S307
        results.append((printed.getvalue(), value))
    return results


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_the_walkthrough_runs_and_says_what_it_claims(tmp_path, monkeypatch):
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    monkeypatch.chdir(tmp_path)  # it writes reports/ where it runs
    pandas_before = "pandas" in sys.modules
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert nb["nbformat"] == 4
    out = _run_cells(nb["cells"])
    assert pandas_before or "pandas" not in sys.modules, "the walk-through needs no pandas"
    values = [v for _, v in out]
    printed = "".join(p for p, _ in out)
    trace, diagnosis, findings = values[0], values[1], values[2]
    assert isinstance(trace, analyzer.Trace) and "SCH001" in repr(diagnosis) and len(repr(diagnosis)) < 200
    assert isinstance(findings, pl.DataFrame) and findings["code"][0] == "SCH001"
    breakdown = next(v for v in values if isinstance(v, pl.DataFrame) and "share_pct" in v.columns)
    assert round(breakdown["share_pct"].sum(), 1) == 100.0
    ranks = next(v for v in values if isinstance(v, pl.DataFrame) and "rank" in v.columns)
    assert ranks.height == 8
    assert "rank 2 arrives last" in printed and "step change +" in printed  # the job verdict, the diff
    changed = next(v for v in values if isinstance(v, pl.DataFrame) and "rel_change" in v.columns)
    assert "MatMulV2" in changed["op_type"].to_list()
    assert (tmp_path / "reports").is_dir() and list((tmp_path / "reports").rglob("diagnosis.json"))
    # the stored outputs are what the cells give (the notebook was run before it was committed)
    stored = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] for c in stored[:-1])
