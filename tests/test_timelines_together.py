"""Exports with a timeline read together (ingest/together/timeline_group, the task_time group, the set-wise
finalize): each run's rows, in table order, are the ones it gets read alone; a damaged timeline goes the
careful path with its own messages and spoils no other run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from analyzer.ingest.database import connect
from analyzer.ingest.loader import load_export
from analyzer.ingest.metadata.discover import scan
from analyzer.ingest.schema import TABLES
from analyzer.ingest.together.together import read_exports_together
from fixtures.generator import write_export

_RUNS = (
    ("healthy", "torch_npu"),
    ("hbm_saturated", "msprof"),
    ("host_sync_low_util", "msprof"),
    ("gappy_multistream", "torch_npu"),
    ("comm_not_overlapped", "msprof"),  # two devices: split into a run per device
    ("comm_not_overlapped", "torch_npu"),  # two ranks
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("timelines")
    for i, (scenario, layout) in enumerate(_RUNS):
        write_export(scenario, root / f"r{i}_{scenario}_{layout}", layout=layout, seed=71 + i)
    return root


# Counter samples come out of a window over each event's args, in an order that differs between two reads of
# the same export alone: compared as sets.
_ANY_ORDER = {"counters"}


def _in_table_order(con, run_ids: list[str]) -> dict[str, dict[str, list[tuple]]]:
    """Per run, every table's rows as the table holds them (no ORDER BY: the order float sums add up in)."""
    return {
        rid: {
            name: con.execute(
                f"SELECT * FROM {name} WHERE run_id = ?{' ORDER BY ALL' if name in _ANY_ORDER else ''}", [rid]
            ).fetchall()
            for name in TABLES
        }
        for rid in run_ids
    }


def _each_alone(root: Path):
    """Every export read by itself into a connection of its own: its tables and problems."""
    rows, problems = {}, []
    for source in scan(root)[0]:
        ingested = load_export(root, sources=[source])
        rows |= _in_table_order(ingested.con, ingested.run_ids)
        problems += [p.line() for p in ingested.problems]
    return rows, problems


def _together(root: Path):
    ingested = load_export(root)
    return _in_table_order(ingested.con, ingested.run_ids), [p.line() for p in ingested.problems]


@pytest.mark.slow  # a tree read together and each run alone: the full suite, not the fast loop
def test_timelines_read_together_give_each_run_its_rows_in_the_order_read_alone(tree):
    sources = scan(tree)[0]
    done = read_exports_together(connect(), sources, frozenset()).done
    assert len(sources) == len(_RUNS) + 1 and set(done) == {s.source_id for s in sources}
    rows, problems = _together(tree)
    assert (rows, problems) == _each_alone(tree)
    held = {name: sum(len(r[name]) for r in rows.values()) for name in ("timeline", "counters", "steps", "ops")}
    assert all(held.values()), held  # device tasks, step markers and counters among them
    assert sum("/dev" in rid for rid in rows) == 2


def _damage(root: Path) -> dict[str, str]:
    """Three exports' timelines damaged each its own way; export folder -> what its message says."""
    exports = sorted(p for p in root.iterdir() if p.is_dir())
    cut = next(exports[0].rglob("trace_view.json"))
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
    no_ts = next(exports[1].rglob("msprof_*.json"))
    events = json.loads(no_ts.read_text())
    events.append({"ph": "X", "name": "late", "pid": 1, "tid": 1, "dur": 1.0})
    no_ts.write_text(json.dumps(events))
    unnamed = next(exports[3].rglob("trace_view.json"))
    events = json.loads(unnamed.read_text())
    unnamed.write_text(json.dumps([*events, {"ph": "X", "name": "x", "pid": 999999, "tid": 1, "ts": "1", "dur": 1}]))
    return {exports[0].name: "truncated", exports[1].name: "no usable 'ts'", exports[3].name: "no process_name"}


@pytest.mark.slow  # a tree read twice: the full suite, not the fast loop
def test_a_damaged_timeline_keeps_its_messages_and_spoils_no_other(tree, tmp_path):
    root = Path(shutil.copytree(tree, tmp_path / "tree"))
    said = _damage(root)
    sources = scan(root)[0]
    done = read_exports_together(connect(), sources, frozenset()).done
    assert {s.source_id for s in sources if s.source_id not in done} == {
        s.source_id for s in sources if s.rel_path.split("/")[0] in said
    }
    rows, problems = _together(root)
    assert (rows, problems) == _each_alone(root)
    for folder, words in said.items():
        assert any(folder in p and words in p for p in problems), (folder, words, problems)
