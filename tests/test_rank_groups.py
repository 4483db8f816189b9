"""job.rank_metadata: the parallel groups grouped by the hash of their ranks are the groups grouped by the ranks
(where two different lists share a hash, the ranks themselves decide); a file it cannot read is left out."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from analyzer.ingest.database import connect
from analyzer.ingest.metadata.discover import scan
from analyzer.job import rank_metadata
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan

# Two sources declare the same group key with different ranks (their own tensor-parallel group), a third
# repeats the first's, and every source declares the default group.
_ROWS = """
CREATE TEMP TABLE _job_meta AS
SELECT * FROM (VALUES
    (0, 'meta', [{'key': 'g1', 'name': 'tp', 'ranks': [0, 1]}, {'key': 'g0', 'name': 'dp', 'ranks': [0, 1, 2, 3]}]),
    (1, 'meta', [{'key': 'g1', 'name': 'tp', 'ranks': [0, 1]}, {'key': 'g0', 'name': 'dp', 'ranks': [0, 1, 2, 3]}]),
    (2, 'meta', [{'key': 'g1', 'name': 'tp', 'ranks': [2, 3]}, {'key': 'g0', 'name': 'dp', 'ranks': [0, 1, 2, 3]}]),
    (3, 'info', NULL)
) AS t(source_no, kind, groups)
"""
_EXPECTED = [
    ("g0", "dp", [0, 1, 2, 3], [0, 1, 2]),
    ("g1", "tp", [0, 1], [0, 1]),
    ("g1", "tp", [2, 3], [2]),
]


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(_ROWS)
    return con


def test_the_groups_by_hash_are_the_groups_by_ranks(con: duckdb.DuckDBPyConnection) -> None:
    assert rank_metadata._groups(con) == _EXPECTED
    assert [tuple(r) for r in con.execute(rank_metadata._GROUPS).fetchall()] == _EXPECTED


def test_a_hash_shared_by_two_lists_leaves_the_ranks_to_decide(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = rank_metadata._GROUPS_BY_HASH.replace("hash(g.ranks)", "0")
    assert not all(row[4] for row in con.execute(shared).fetchall())  # the two 'tp' lists were taken for one
    monkeypatch.setattr(rank_metadata, "_GROUPS_BY_HASH", shared)
    assert rank_metadata._groups(con) == _EXPECTED


def test_a_metadata_file_that_is_not_utf8_is_left_out_not_fatal(tmp_path: Path) -> None:
    """read_text refuses a file that is not UTF-8 text: that file says nothing, every other rank is read."""
    root = Path(write_job(job_plan("job_slow_rank", ranks=4, seed=1), tmp_path))
    sources = scan(root)[0]
    whole = rank_metadata.read_rank_metadata(connect(), sources)
    bad = next(s for s in sources if s.metadata_files.get("profiler_metadata"))
    bad.metadata_files["profiler_metadata"][0].write_bytes(b'{"rank": "\xff\xfe"}')
    read = rank_metadata.read_rank_metadata(connect(), sources)
    n = sources.index(bad)
    assert [m for i, m in enumerate(read) if i != n] == [m for i, m in enumerate(whole) if i != n]
    assert read[n].groups == () and read[n].world_size is None
