"""SQLite tables fetched by ADBC's driver come out exactly as Python's sqlite3 gives them, whatever their values'
storage classes; tables whose types the driver cannot take are fetched by sqlite3."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.ingest.sqlite import sqlite_arrow
from analyzer.ingest.sqlite.sqlite_arrow import _adbc_table, _sqlite3_table, fetch_arrow
from analyzer.ingest.sqlite.sqlite_open import open_readonly


def _write(path: Path, declared: list[str], rows: list[tuple]) -> None:
    conn = sqlite3.connect(path)
    conn.execute(f"CREATE TABLE t({', '.join(f'c{i} {d}' for i, d in enumerate(declared))})")
    conn.executemany(f"INSERT INTO t VALUES ({', '.join('?' * len(declared))})", rows)
    conn.commit()
    conn.close()


def _query(where: str = "") -> str:
    """What fetch_arrow asks of the test table (it has row ids)."""
    return f'SELECT rowid AS "_rowid", * FROM "t" WHERE ({where or "1"})'


def _by_driver(conn, where: str = "") -> pa.Table | None:
    """The table as the driver gives it, None when sqlite3 must fetch it."""
    return _adbc_table(conn, _query(where), f'FROM "t" WHERE ({where or "1"})')


VALUES = st.one_of(
    st.none(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.sampled_from([1e-05, 0.1, 2.5, 1e20, -3.0]),
    st.text(max_size=6),
    st.sampled_from(["N/A", "", "12", "1.000000e-05", "MatMul"]),
    st.binary(max_size=3),
)


# SQLITE_ARROW_EXAMPLES: more examples than the suite's, for a search after a change of sqlite_arrow.py
EXAMPLES = int(os.environ.get("SQLITE_ARROW_EXAMPLES", "60"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    declared=st.lists(st.sampled_from(["INTEGER", "REAL", "TEXT", "BLOB", ""]), min_size=1, max_size=3),
    data=st.data(),
    batch=st.sampled_from([2, 7, 1 << 20]),
)
@pytest.mark.slow
def test_any_values_come_out_as_sqlite3_gives_them(declared, data, batch, monkeypatch):
    """Columns of any storage classes, in any order, across the driver's batches (made small here, so that a
    type changing between batches is met): the same table as sqlite3's, schema included."""
    rows = data.draw(st.lists(st.tuples(*[VALUES] * len(declared)), max_size=20))
    monkeypatch.setattr(sqlite_arrow, "ADBC_BATCH_ROWS", batch)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.db"
        _write(path, declared, rows)
        with open_readonly(path) as conn:
            got = fetch_arrow(conn, "t")
            expected = _sqlite3_table(conn, _query())
    assert got.schema == expected.schema
    assert got.equals(expected)


def test_a_typed_table_is_fetched_by_the_driver(tmp_path):
    """Leading NULLs (over more rows than the driver's default batch) in text, real and integer columns: the
    driver takes the table (no fetch by sqlite3), with sqlite3's types and values; a column of NULLs is NULL."""
    path = tmp_path / "t.db"
    rows = [(None, None, None, None)] * 3000 + [(i, i / 4, f"op{i}", None) for i in range(3000)]
    _write(path, ["INTEGER", "REAL", "TEXT", "INTEGER"], rows)
    with open_readonly(path) as conn:
        fast = _by_driver(conn, "c0 IS NULL OR c0 % 2 = 0")
        expected = _sqlite3_table(conn, _query("c0 IS NULL OR c0 % 2 = 0"))
    assert fast is not None
    assert fast.num_rows == 4500
    assert [f.type for f in fast.schema] == [pa.int64(), pa.int64(), pa.float64(), pa.string(), pa.null()]
    assert fast.equals(expected)


def test_a_real_among_text_is_written_as_sqlite3_writes_it(tmp_path):
    """Near miss of the above: the driver writes a REAL among text as its own text (1.000000e-05); the table is
    fetched by sqlite3 instead, which writes 1e-05 (a column declared without a type keeps a REAL a REAL)."""
    path = tmp_path / "t.db"
    _write(path, [""], [("MatMul",), (1e-05,), ("N/A",)])
    with open_readonly(path) as conn:
        assert _by_driver(conn) is None
        got = fetch_arrow(conn, "t")
    assert got.column("c0").to_pylist() == ["MatMul", "1e-05", "N/A"]


def test_a_plain_sqlite3_connection_is_read_by_sqlite3(tmp_path):
    """A connection that does not say its file (not opened by open_readonly) is still read."""
    path = tmp_path / "t.db"
    _write(path, ["INTEGER"], [(1,), (2,)])
    conn = sqlite3.connect(path)
    try:
        assert fetch_arrow(conn, "t").column("c0").to_pylist() == [1, 2]
    finally:
        conn.close()


def test_an_integer_beyond_2_53_among_reals_stays_exact(tmp_path):
    """A nanosecond time stored as INTEGER beside a REAL: the driver would make both REALs (the time rounded);
    sqlite3 keeps the column as text, the time exact, and so does fetch_arrow."""
    path = tmp_path / "t.db"
    _write(path, [""], [(1736408883704643212,), (2.5,)])
    with open_readonly(path) as conn:
        assert _by_driver(conn) is None
        got = fetch_arrow(conn, "t")
    assert got.column("c0").to_pylist() == ["1736408883704643212", "2.5"]


def test_a_without_rowid_table_is_fetched_without_row_ids(tmp_path):
    """A WITHOUT ROWID table has no row id to name: its columns alone, by the driver as by sqlite3."""
    path = tmp_path / "t.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT) WITHOUT ROWID")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(2, "b"), (1, "a")])
    conn.commit()
    conn.close()
    with open_readonly(path) as ro:
        got = fetch_arrow(ro, "t")
        assert _adbc_table(ro, 'SELECT * FROM "t" WHERE (1)', 'FROM "t" WHERE (1)') == got
    assert got.column_names == ["k", "v"] and got.to_pydict() == {"k": [1, 2], "v": ["a", "b"]}
