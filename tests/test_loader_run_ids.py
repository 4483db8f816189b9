"""An export's runs are found by its name as a prefix, never as a LIKE pattern ('_' and '%' are literal)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from analyzer.ingest.loader import _runs_of
from analyzer.ingest.model import ExportSource


def test_runs_of_an_export_are_its_own_when_another_name_matches_it_as_a_pattern():
    con = duckdb.connect()
    con.execute("CREATE TABLE runs (run_id VARCHAR)")
    con.execute("INSERT INTO runs VALUES ('a_b%/dev0'), ('aXbYZ/dev0'), ('a_b%/dev1'), ('a_b%'), ('a_b%other/dev0')")
    source = ExportSource("a_b%", Path("unused"), "a_b%", "torch_npu", "text", "torch_npu", {})
    assert _runs_of(con, source) == ["a_b%", "a_b%/dev0", "a_b%/dev1"]
