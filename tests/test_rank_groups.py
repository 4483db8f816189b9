"""job.rank_metadata: the parallel groups grouped by the hash of their ranks are the groups grouped by the ranks;
where two different lists share a hash, the ranks themselves decide."""

from __future__ import annotations

import duckdb
import pytest

from analyzer.job import rank_metadata

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
