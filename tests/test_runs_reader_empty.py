"""A page query that read no rows from tables that are all empty is not run again for the next chunks of runs
(analyzer/report/runs_reader.py, report/empty_sources.py): the same pages, fewer queries, and a query that makes
rows from empty tables still run for every chunk. One that has no row without a table that is empty is read
over no run at all."""

from __future__ import annotations

from pathlib import Path

import pytest

import analyzer
from analyzer.api.report_files import write_files
from analyzer.report.empty_sources import EmptySources
from analyzer.report.runs_reader import RunsReader

ROOT = Path(__file__).resolve().parents[1]
COUNT = "SELECT count(*) AS n FROM memory_records WHERE run_id = $run"


@pytest.fixture(scope="module")
def sweep():
    trace = analyzer.load(ROOT / "fixtures" / "examples" / "batch_sweep")
    yield trace, [d for d in analyzer.diagnose_runs(trace) if not d.compares_runs]
    trace.close()


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow  # a sweep diagnosed (the fixture): the full suite, not the fast loop
def test_tables_are_told_empty_through_views_and_never_for_a_query_not_bound(sweep):
    trace, _ = sweep
    sources = EmptySources(trace.con)
    assert sources.all_empty("SELECT * FROM memory_records WHERE run_id = $run AND total_mb > $limit")
    assert not sources.all_empty("SELECT * FROM memory_records JOIN ops USING (run_id) WHERE run_id = $run")
    assert not sources.all_empty("SELECT * FROM no_such_table WHERE run_id = $run")
    view = "SELECT run_id FROM l2_cache UNION ALL SELECT run_id FROM core_utilization"
    trace.con.execute(f"CREATE TEMP VIEW __empty_view AS {view}")
    assert sources.all_empty("SELECT * FROM __empty_view WHERE run_id = $run")
    trace.con.execute("DROP VIEW __empty_view")


@pytest.mark.slow  # writes every page twice: the full suite, not the fast loop
def test_pages_are_the_same_and_an_empty_query_runs_for_the_first_chunk_only(sweep, tmp_path, monkeypatch):
    trace, diagnoses = sweep
    runs = [d.run_id for d in diagnoses]
    for d in diagnoses:
        write_files(d, tmp_path / "alone", ["html"], trace.con, False)
    reader = RunsReader(trace.con, runs, chunk=2)  # three chunks of the five runs
    asked: list[str] = []
    read_all = RunsReader._read_all

    def counted(self, sql, others, order, members):
        asked.append(sql)
        return read_all(self, sql, others, order, members)

    monkeypatch.setattr(RunsReader, "_read_all", counted)
    for d in diagnoses:
        write_files(d, tmp_path / "chunks", ["html"], reader, False)
    assert _files(tmp_path / "chunks") == _files(tmp_path / "alone")
    empty = {sql for sql in asked if reader._sources.all_empty(sql)}
    assert empty and all(asked.count(sql) == 1 for sql in empty)  # sampled core use: once, not per chunk
    once = [sql for sql in asked if asked.count(sql) == 1]
    # memory over time reads ops (its time origin) too: once all the same, memory_records being what it has rows from
    assert any("FROM memory_records" in sql and "FROM ops" in sql for sql in once)
    assert any(asked.count(sql) == 3 for sql in asked)  # a query with rows: each chunk
    counts = [reader.series(COUNT, {"run": run}, "n")["n"].to_list() for run in reversed(runs)]
    assert counts == [[0]] * len(runs)  # rows made from empty tables: every chunk's own


@pytest.mark.slow  # a sweep diagnosed (the fixture): the full suite, not the fast loop
def test_a_query_with_no_row_without_an_empty_table_is_read_over_no_run(sweep, monkeypatch):
    trace, diagnoses = sweep
    runs = [d.run_id for d in diagnoses]
    reader = RunsReader(trace.con, runs, chunk=2)
    read_over: list[list[str]] = []
    read_all = RunsReader._read_all

    def counted(self, sql, others, order, members):
        read_over.append(list(members))
        return read_all(self, sql, others, order, members)

    monkeypatch.setattr(RunsReader, "_read_all", counted)
    sql = "SELECT m.ts_ns, o.op_name FROM memory_records m JOIN ops o USING (run_id) WHERE m.run_id = $run"
    alone = trace.con.sql(sql, params={"run": runs[0]}).pl()
    for run in runs:
        rows = reader.series(sql, {"run": run}, "ts_ns", rows_from=("memory_records",))
        assert rows.is_empty() and rows.schema == alone.schema
    assert read_over == [[]]  # its columns only, once: no chunk of runs
    reader.series(sql, {"run": runs[0]}, "ts_ns, op_name")  # another query (its order): without rows_from, run
    assert read_over == [[], runs[:2]]
