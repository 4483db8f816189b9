"""The time breakdown's parts are named once (_time_part_names, views/breakdown.sql); every breakdown follows it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from analyzer.ingest.database import connect
from analyzer.rule_engine.views import create_views, helper_definitions

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def parts() -> list[str]:
    con = connect()
    try:
        create_views(con)
        return [row[0] for row in con.execute("SELECT part FROM _time_part_names ORDER BY part_no").fetchall()]
    finally:
        con.close()


def _sql_without_comments(text: str) -> str:
    return re.sub(r"--[^\n]*", "", text)


def test_time_part_names_each_part_is_spelled_once_in_the_sql(parts) -> None:
    """Only the VALUES list names a gap part; other SQL (and Python) reads the list or the relations."""
    sql = "\n".join(_sql_without_comments(d.sql) for d in helper_definitions())
    for part in (p for p in parts if p.startswith("gap_") and p != "gap_unattributed"):
        assert len(re.findall(rf"'{part}'", sql)) == 1 + (part == "gap_host_setup"), part  # + its logs-only filter
    # Python reads the list from the diagnosis; the one exception is a colour per part on the HTML verdict bar
    python = [p for p in (ROOT / "analyzer").rglob("*.py") if "gap_stream_wait" in p.read_text(encoding="utf-8")]
    assert [str(p.relative_to(ROOT)) for p in python] == ["analyzer/report/html_verdict.py"]


def test_time_part_names_order_the_wide_relations(parts) -> None:
    by_name = {d.name: [c for c, _doc in d.columns] for d in helper_definitions()}
    assert [c.removesuffix("_us") for c in by_name["_time_breakdown"] if c.removesuffix("_us") in parts] == parts
    assert [c for c in by_name["_window_measures"] if c in parts] == parts


def test_time_part_names_are_the_diagnosis_schema_parts(parts) -> None:
    schema = json.loads((ROOT / "docs" / "diagnosis.schema.json").read_text(encoding="utf-8"))
    enums = re.findall(r'"part": \{\s*"enum": (\[[^\]]*\])', json.dumps(schema, indent=1))
    assert [json.loads(e) for e in enums] == [parts]
