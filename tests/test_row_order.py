"""Rows go into the tables in a defined order: a run's ops read together with other runs (csv_group: one scan
of many runs' files) come in its file's order, the order they have when the run is read alone. The helper
views break ties by rowid (``_intervals_gaps``), so that order is what makes their results repeat."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from analyzer.ingest.csv import csv_group
from analyzer.ingest.database import connect
from analyzer.ingest.loader import load_export
from analyzer.ingest.metadata.discover import scan
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan

# Enough ranks that a scan's rows outnumber its files only a few times: a join tagging each row with its run
# through the list of files then hashed the scan's rows, and gave them back in another order.
_RANKS = 128


def _ops_in_table_order(con) -> dict[str, list[tuple]]:
    """Each run's ops as the table holds them (rowid order: the order ties are broken in)."""
    rows = con.execute("SELECT run_id, op_name, start_ns FROM ops ORDER BY rowid").fetchall()
    runs: dict[str, list[tuple]] = {}
    for run_id, *row in rows:
        runs.setdefault(run_id, []).append(tuple(row))
    return runs


def _file_names(path: Path) -> list[str]:
    with path.open(newline="") as fh:
        return [row["Name"] for row in csv.DictReader(fh)]


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    plan = job_plan("job_pipeline_imbalance", ranks=_RANKS, seed=23)
    return write_job(plan, tmp_path_factory.mktemp("job"), kernels=2)


def _check_file_order(root: Path, ranks: int) -> None:
    together = _ops_in_table_order(load_export(root).con)
    sources = scan(root)[0]
    assert len(together) == len(sources) == ranks
    for source in sources:
        (kernels,) = source.files["op_summary"]
        assert [name for name, _ in together[source.source_id]] == _file_names(kernels), source.source_id
    for source in sources[:: ranks // 2]:  # read alone: the same rows in the same order
        con = connect()
        load_export(root, con=con, sources=[source])
        assert _ops_in_table_order(con) == {source.source_id: together[source.source_id]}


@pytest.mark.slow  # a job of many ranks read together: the full suite, not the fast loop
def test_a_run_read_with_others_keeps_its_rows_in_file_order(job):
    _check_file_order(job, _RANKS)  # the files joined into one scanned file (csv_joined)


@pytest.mark.slow  # a job of many ranks read together: the full suite, not the fast loop
def test_the_same_when_the_files_are_scanned_as_a_list(job, tmp_path, monkeypatch):
    """A quote in a header keeps the files out of the joined file: one scan of the list of files (of fewer
    ranks: each costs more this way)."""
    root = tmp_path / "listed"
    for rank in sorted(p for p in job.iterdir() if p.is_dir())[:16]:
        shutil.copytree(rank, root / rank.name)
    for kernels in root.rglob("kernel_details.csv"):
        header, _, body = kernels.read_bytes().partition(b"\n")
        kernels.write_bytes(b'"' + header.replace(b",", b'",', 1) + b"\n" + body)
    scanned, insert = [], csv_group._insert

    def listed(con, statement, group):  # the list scan itself, not the file-by-file path it falls back to
        inserted = insert(con, statement, group)
        scanned.append(len(group))
        return inserted

    monkeypatch.setattr(csv_group, "_insert", listed)
    _check_file_order(root, 16)
    assert 16 in scanned


def test_counters_go_in_in_the_trace_order(tmp_path):
    """Counter samples come out of window queries (one partition per event): they go in in the trace's order,
    an event's samples by arg name."""
    events = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "NPU MEM"}}]
    for n in range(3000):
        args = {"Write(MB/s)": 2.0, "Read(MB/s)": 1.0} if n % 2 else {"KB": n}
        events.append({"ph": "C", "name": f"APP/{'mem' if n % 2 else 'kb'}", "pid": 1, "ts": 1000 + n, "args": args})
    trace = tmp_path / "trace_view.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    con = load_export(trace).con
    rows = con.execute("SELECT ts_ns, unit, value FROM counters ORDER BY rowid").fetchall()
    assert len(rows) == 4500
    assert rows[:4] == [(1000000, "KB", 0.0), (1001000, "MB/s", 1.0), (1001000, "MB/s", 2.0), (1002000, "KB", 2.0)]
    assert rows == sorted(rows)
