"""An export's timeline JSON is read on a cursor of its own beside its CSV readers (loader._beside): the
tables and problems are those of reading one by one, and one thread reads one by one as before."""

from __future__ import annotations

import threading

import pytest

from analyzer.ingest import load_export, loader
from analyzer.ingest.database import connect
from fixtures.generator import write_export

_TABLES = ("ops", "timeline", "counters", "steps", "runs", "op_stats", "api_stats")


def _export(tmp_path):
    (root,) = write_export("large_host_gaps", tmp_path / "run", layout="msprof", seed=5, slice_rows=400)
    out = root / "mindstudio_profiler_output"
    trace = sorted(out.glob("msprof_*.json"))[-1]
    trace.write_bytes(trace.read_bytes()[:-300])  # cut mid-event: salvaged, and reported
    summary = sorted(out.glob("op_summary_*.csv"))[-1]
    with summary.open("a", encoding="utf-8") as fh:
        fh.write("0,not,a,row\n")  # a row that does not fit the header: reported by line
    return root


def _read(export, threads: int):
    con = connect()
    con.execute(f"SET threads = {threads}")
    loaded = load_export(export, con)
    tables = {t: sorted(con.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in _TABLES}
    return tables, loaded.problems


def test_timeline_read_beside_the_csv_readers_gives_what_reading_one_by_one_gives(tmp_path):
    export = _export(tmp_path)
    beside, alone = _read(export, 2), _read(export, 1)
    assert beside[0] == alone[0]
    assert beside[1] == alone[1]
    assert len(beside[0]["timeline"]) > 100 and len(beside[0]["ops"]) > 100
    problems = " ".join(p.problem for p in beside[1])
    assert "truncated JSON" in problems and "line" in " ".join(p.location for p in beside[1])


class _Threads(dict):
    """READERS, each reader noting the thread it ran on."""

    def __init__(self, readers):
        super().__init__()
        self.readers, self.seen = readers, {}

    def __contains__(self, kind):
        return kind in self.readers

    def __iter__(self):
        return iter(self.readers)

    def __getitem__(self, kind):
        def read(*args):
            self.seen[kind] = threading.current_thread()
            return self.readers[kind](*args)

        return read


@pytest.mark.parametrize("threads", [1, 2])
def test_timeline_is_read_on_its_own_thread_only_when_duckdb_has_threads_to_spare(tmp_path, monkeypatch, threads):
    readers = _Threads(loader.READERS)
    monkeypatch.setattr(loader, "READERS", readers)
    _read(_export(tmp_path), threads)
    assert readers.seen["op_summary"] is threading.main_thread()
    assert (readers.seen["timeline"] is threading.main_thread()) == (threads == 1)
