"""A job's exports read in chunks (job/spread_read.py) give the tables, run ids and problems of one read.

The executor here runs the chunks in this process (``LocalPool(1)``), finishing them in reverse
order, and loses one on request: what is checked is the chunking, the order of the inserts and the
parent's reading of a lost chunk. Worker processes and Dask: test_job_spread_dask.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.ingest.database import connect
from analyzer.ingest.schema import TABLES
from analyzer.job.job_ingest import load_with_jobs
from analyzer.job.spread_read import plan_read_chunks, spread_reader
from analyzer.runs.executor import LocalPool
from tests.spread_jobs import DAMAGED_RANK, write_damaged_job


class _BackwardsPool(LocalPool):
    """Chunks finished last to first, the one numbered ``lose`` coming back as its worker's death."""

    def __init__(self, slots: int, lose: int | None = None) -> None:
        super().__init__(1)
        self._slots, self.lose = slots, lose
        self.handed: list[int] = []  # the chunks given to the "workers"
        self.notes: list[str] = []
        self.note = self.notes.append  # as DaskExecutor's: what the user is told

    @property
    def slots(self) -> int:
        return self._slots

    def completed(self, fn, items, *args):
        for item in reversed(items):
            self.handed.append(item.index)
            yield item, (RuntimeError("worker lost") if item.index == self.lose else fn(item, *args))


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    return write_damaged_job(tmp_path_factory.mktemp("spread"), ranks=8)


def _read(job: Path, executor=None) -> tuple[dict, list, list, list]:
    """Every table's rows of each run in their stored order, the run ids, the problems and each job's problems.
    (Which run comes first in a table may differ: an export read alone, the damaged one, is stored after those
    read together, of its chunk or of the whole job; no query reads the runs in stored order.)"""
    reader = {"read_runs": spread_reader(executor)} if executor else {}
    ingested, jobs = load_with_jobs(job, frozenset(), con=connect(), **reader)
    rows: dict[tuple[str, str], list] = {}
    for name in TABLES:
        for row in ingested.con.execute(f"SELECT run_id, * FROM {name}").fetchall():
            rows.setdefault((name, row[0]), []).append(row)
    return rows, ingested.run_ids, ingested.problems, [j.problems for j in jobs]


@pytest.fixture(scope="module")
def one_read(job):
    return _read(job)


@pytest.mark.slow
@pytest.mark.parametrize("lose", [None, pytest.param(1, marks=pytest.mark.slow)])
def test_chunks_read_in_any_order_or_lost_give_the_tables_of_one_read(job, one_read, lose):
    pool = _BackwardsPool(slots=2, lose=lose)
    rows, run_ids, problems, job_problems = _read(job, pool)
    assert pool.handed == [3, 2, 1, 0]  # 4 chunks of 2 ranks
    if lose is None:
        assert pool.notes == []
    else:
        assert len(pool.notes) == 1 and "the worker reading 2 export(s)" in pool.notes[0]
        assert "RuntimeError: worker lost" in pool.notes[0] and pool.notes[0].endswith("they are read here")
    assert run_ids == one_read[1] and len(run_ids) == 8
    assert problems == one_read[2]
    assert any(f"rank{DAMAGED_RANK}_" in p.file and "kernel_details.csv" in p.file for p in problems)
    assert job_problems == one_read[3]
    assert rows.keys() == one_read[0].keys()
    for key, want in one_read[0].items():
        assert rows[key] == want, f"table {key[0]}, run {key[1]} differs"
    assert sum(name == "ops" for name, _ in rows) == 8  # every rank's kernels are there to compare


def test_chunks_keep_the_tree_order_and_share_the_slots(job):
    sources = [p for p in sorted(job.iterdir()) if p.is_dir()]
    chunks = plan_read_chunks(job, sources, slots=3, left_out_kinds=frozenset())  # 6 wanted: 2 a chunk
    assert [c.index for c in chunks] == [0, 1, 2, 3]
    assert [s for c in chunks for s in c.sources] == sources


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--scheduler", "tcp://127.0.0.1:9"], "--scheduler needs --executor dask"),
        (["--executor", "local", "--scheduler", "tcp://127.0.0.1:9"], "--scheduler needs --executor dask"),
        (["--jobs", "2"], "--jobs needs --executor"),
        (["--executor", "local", "--jobs", "0"], "--jobs must be at least 1"),
    ],
)
def test_option_mistakes_are_said_before_any_work(job, tmp_path, capsys, options, message):
    assert main(["diagnose", str(job), "--out", str(tmp_path / "out"), *options]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_executor_without_an_export_to_read_is_refused(tmp_path, capsys):
    db = tmp_path / "some.duckdb"
    assert main(["diagnose", "--db", str(db), "--executor", "dask", "--out", str(tmp_path / "out")]) == 2
    assert "--executor dask: give an export PATH" in capsys.readouterr().err


@pytest.mark.slow
def test_unreachable_scheduler_is_named_without_a_traceback(job, tmp_path, capsys):
    pytest.importorskip("distributed", reason="needs the dask extra: pip install 'npu-triage[dask]'")
    args = ["diagnose", str(job), "--out", str(tmp_path / "out"), "--executor", "dask", "--scheduler"]
    assert main([*args, "tcp://127.0.0.1:9"]) == 2  # the discard port: nothing listens there
    err = capsys.readouterr().err
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err and "Traceback" not in err
    assert not list(tmp_path.rglob("diagnosis.json"))
