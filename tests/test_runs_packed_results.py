"""A worker's results cross to the driver packed, one table per catalog table and schema, and arrive as they left."""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest

from analyzer.ingest.metadata.discover import scan
from analyzer.ingest.metadata.fingerprint import source_fingerprint
from analyzer.runs.chunk_work import RunChunk, analyze_chunk
from analyzer.runs.packed_results import PackedResults
from analyzer.runs.work import RunTask, WorkSettings, analyze_run
from tests.tiny_exports import write_tiny_export


def _task(folder) -> RunTask:
    return RunTask(str(folder), folder.name, source_fingerprint(scan(folder)[0][0]))


@pytest.mark.slow
def test_a_chunks_results_arrive_as_sent_packed_one_table_per_name_and_schema(tmp_path):
    folders = [write_tiny_export(tmp_path / f"run_{i}" / "run", seed=i, steps=3) for i in range(3)]
    tasks = [_task(f) for f in folders]
    results = analyze_chunk(RunChunk(tuple(tasks)), WorkSettings())
    # a job rank's findings bring columns of their own; a run that failed brings a failures table
    results.append(analyze_run(replace(tasks[0], job_rank=True), WorkSettings()))
    results.append(analyze_run(RunTask(str(tmp_path / "gone"), "gone", "0" * 16), WorkSettings()))
    assert "input_amount_us" in results[3]["findings"].column_names and "failures" in results[4]

    back = pickle.loads(pickle.dumps(PackedResults(results)))

    assert type(back) is list and len(back) == len(results)
    for sent, got in zip(results, back, strict=True):
        assert list(got) == list(sent)
        assert all(got[name].equals(sent[name], check_metadata=True) for name in sent)
    _, (_, packed) = PackedResults(results).__reduce__()
    kinds = {(name, table.schema.to_string()) for tables in results for name, table in tables.items()}
    assert len(packed) == len(kinds) < sum(len(tables) for tables in results)
    assert all(column.num_chunks <= 1 for table in packed for column in table.columns)  # none: no row
