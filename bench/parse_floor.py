"""The parse floor: DuckDB reads the same CSV and JSON files into typed tables, and nothing else.

Run as a child process by the benchmark: ``python bench/parse_floor.py --csv F... [--csv F...] --json F...``.
Each ``--csv`` group (one table: kernel_details / op_summary slices, msprof's task_time slices) is
read with types detected (numbers as numbers), the timeline JSON with the same essential event
fields the engine keeps (``ph, name, pid, tid, ts, dur, cat, id, args``).
"""

from __future__ import annotations

import argparse
import sys

import duckdb

_EVENT_COLUMNS = (
    "{ph: 'VARCHAR', name: 'VARCHAR', pid: 'VARCHAR', tid: 'VARCHAR', ts: 'DECIMAL(38,3)', "
    "dur: 'DOUBLE', cat: 'VARCHAR', id: 'VARCHAR', args: 'JSON'}"
)


def read_floor(csv_groups: list[list[str]], json_paths: list[str]) -> tuple[int, int]:
    """Rows read into the typed CSV tables and the event table."""
    con = duckdb.connect(":memory:")
    rows = 0
    for n, paths in enumerate(csv_groups):
        con.execute(f"CREATE TABLE csv_rows_{n} AS SELECT * FROM read_csv(?, union_by_name=true, header=true)", [paths])
        rows += con.execute(f"SELECT count(*) FROM csv_rows_{n}").fetchall()[0][0]
    con.execute(
        f"CREATE TABLE events AS SELECT * FROM read_json(?, format='array', records=true, "
        f"columns={_EVENT_COLUMNS}, maximum_object_size=16777216)",
        [json_paths],
    )
    return rows, con.execute("SELECT count(*) FROM events").fetchall()[0][0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", nargs="+", action="append", required=True, help="one table's CSV files")
    parser.add_argument("--json", nargs="+", required=True)
    args = parser.parse_args(argv)
    rows, events = read_floor(args.csv, args.json)
    print(f"{rows} csv rows, {events} events")
    return 0


if __name__ == "__main__":
    sys.exit(main())
