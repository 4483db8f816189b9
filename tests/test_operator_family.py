"""One operator family: the rules' subjects and the catalog's op_name_norm both come from the helper view _tasks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analyzer.ingest.database import connect
from analyzer.metrics.summary import run_summary_tables
from analyzer.rule_engine.views import create_views

ROOT = Path(__file__).resolve().parents[1]

# (op_name, the name the family keeps): separators with an optional 'op' go, digits glued to a name stay.
TRICKY = [
    ("MatMul_12", "MatMul"),
    ("Add.3", "Add"),
    ("Cast_op4_1", "Cast"),
    ("hcom_allReduce__170_1_1", "hcom_allReduce_"),
    ("layer/3", "layer"),
    ("Relu-7", "Relu"),
    ("Conv2D1", "Conv2D1"),
    ("MatMulV2", "MatMulV2"),
    ("aclnnMm_MatMulCommon_MatMulV2", "aclnnMm_MatMulCommon_MatMulV2"),
    ("Softmax", "Softmax"),
    ("42", "42"),
]


@pytest.fixture(scope="module")
def tricky_con():
    con = connect()
    rows = [("r", 0, 1, 1, name, "Op", "AI_CORE", i * 100, 0.05, i * 100 + 50) for i, (name, _) in enumerate(TRICKY)]
    rows.append(("r", 0, 1, 1, "Add_9", "Add", "AI_CORE", 5000, 0.05, 5050))
    con.executemany(
        "INSERT INTO ops (run_id, device_id, stream_id, step_id, op_name, op_type, task_type, start_ns, dur_us,"
        " end_ns, input_shapes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
        rows,
    )
    con.execute("UPDATE ops SET input_shapes = '1,8;1,8' WHERE op_name = 'Add_9'")
    create_views(con)
    yield con
    con.close()


def test_operator_family_tricky_names_normalized_once(tricky_con) -> None:
    got = dict(tricky_con.execute("SELECT op_name, op_name_norm FROM _tasks WHERE op_type = 'Op'").fetchall())
    assert got == dict(TRICKY)
    families = dict(tricky_con.execute("SELECT op_name, op_family FROM _compute_tasks").fetchall())
    assert families["Cast_op4_1"] == "Op [Cast]"
    assert families["Add_9"] == "Add [1,8;1,8]"  # input shapes, when the task has them, name the family


def test_operator_family_catalog_positions_agree_with_the_task_view(tricky_con) -> None:
    positions = run_summary_tables(tricky_con, "r", "c")["op_positions"].to_pylist()
    view = tricky_con.execute("SELECT op_name_norm FROM _tasks ORDER BY start_ns").fetchall()
    assert [p["op_name_norm"] for p in positions] == [v[0] for v in view]


def test_operator_family_no_other_code_strips_op_names() -> None:
    """The suffix-stripping expression lives in views/tasks.sql only; rules and Python read its columns."""
    stripping = re.compile(r"regexp_replace\(\s*op_name,\s*'[^']*\$'")  # a pattern anchored at the name's end
    others = [*ROOT.glob("rules/*/*.toml"), *ROOT.glob("analyzer/**/*.py"), *ROOT.glob("analyzer/**/*.sql")]
    found = [str(p.relative_to(ROOT)) for p in others if stripping.search(p.read_text(encoding="utf-8"))]
    assert found == ["analyzer/rule_engine/views/tasks.sql"]
