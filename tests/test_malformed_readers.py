"""The malformed corpus at the reader: each case read by ``load_export`` (no CLI, no report), checked
against what it states must be said and kept, and the input left byte-identical."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analyzer.ingest import load_export
from analyzer.ingest.loader import usable_run_ids
from analyzer.ingest.model import IngestError
from tests.malformed.cases import CASES, Case
from tests.tree_hash import tree_digest

READER_CASES = [c for c in CASES if c.command != "batch"]


def _fast_loop_first_of_each_class() -> list:
    """Every reader case; the first of each class of fault in the fast loop, the others marked slow."""
    seen: set[str] = set()
    params = []
    for case in READER_CASES:
        params.append(pytest.param(case, id=case.name, marks=() if case.fault_class not in seen else pytest.mark.slow))
        seen.add(case.fault_class)
    return params


def _problems_on(case: Case, problems: list) -> list:
    return [p for p in problems if case.file in p.file]


@pytest.mark.parametrize("case", _fast_loop_first_of_each_class())
def test_reader_handles_malformed_case_as_stated(case: Case, tmp_path: Path):
    folder = tmp_path / "in"
    folder.mkdir()
    path = case.build(folder)
    before = tree_digest(folder)
    try:
        ingested = load_export(path)
    except IngestError as exc:
        assert case.expect == "unusable", f"{case.name}: {exc}"
        assert tree_digest(folder) == before
        return
    lines = [p.line() for p in ingested.problems]
    usable = usable_run_ids(ingested.con, ingested.run_ids)
    if case.expect == "clean":
        assert not [p for p in ingested.problems if p.severity != "info"], lines
    else:
        assert bool(usable) == (case.expect == "usable"), lines
    if case.file:
        named = _problems_on(case, ingested.problems)
        assert named, f"no problem names {case.file}: {lines}"
        if case.where:
            assert any(re.search(case.where, p.location) for p in named), f"no location matches {case.where}: {lines}"
        if case.says:
            assert any(re.search(case.says, p.problem) for p in named), f"no problem says {case.says}: {lines}"
    if case.tasks is not None:
        assert ingested.con.execute("SELECT count(*) FROM ops").fetchone()[0] == case.tasks, lines
    assert tree_digest(folder) == before, "the reader changed its input"


def test_corpus_reader_side_cases_cover_each_class():
    kinds = {c.kind for c in CASES if c.kind}
    for needed in (
        "csv-header-shift",
        "csv-cell-type",
        "csv-repeated-header",
        "csv-duplicate-rows",
        "csv-negative-times",
        "csv-line-ends",
        "csv-wide",
        "json-surrogate",
        "json-negative-times",
        "sqlite-wal",
        "sqlite-missing-table",
        "sqlite-types",
        "sqlite-negative-times",
    ):
        assert needed in kinds
    assert len([c for c in CASES if c.kind]) >= 50
