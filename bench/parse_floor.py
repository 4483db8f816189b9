"""The parse floor: DuckDB reads the same CSV and JSON files into typed tables, and nothing else.

Run as a child process by the benchmark: ``python bench/parse_floor.py --csv F... --json F...``.
The CSVs are read with types detected (numbers as numbers), the timeline JSON with the same
essential event fields the engine keeps (``ph, name, pid, tid, ts, dur, cat, id, args``).
"""

from __future__ import annotations

import argparse
import sys

import duckdb

_EVENT_COLUMNS = (
    "{ph: 'VARCHAR', name: 'VARCHAR', pid: 'VARCHAR', tid: 'VARCHAR', ts: 'DECIMAL(38,3)', "
    "dur: 'DOUBLE', cat: 'VARCHAR', id: 'VARCHAR', args: 'JSON'}"
)


def read_floor(csv_paths: list[str], json_paths: list[str]) -> tuple[int, int]:
    """Rows read into the typed CSV table and the event table."""
    con = duckdb.connect(":memory:")
    con.execute(
        "CREATE TABLE csv_rows AS SELECT * FROM read_csv(?, union_by_name=true, header=true)",
        [csv_paths],
    )
    con.execute(
        f"CREATE TABLE events AS SELECT * FROM read_json(?, format='array', records=true, "
        f"columns={_EVENT_COLUMNS}, maximum_object_size=16777216)",
        [json_paths],
    )
    return (
        con.execute("SELECT count(*) FROM csv_rows").fetchone()[0],
        con.execute("SELECT count(*) FROM events").fetchone()[0],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", nargs="+", required=True)
    parser.add_argument("--json", nargs="+", required=True)
    args = parser.parse_args(argv)
    rows, events = read_floor(args.csv, args.json)
    print(f"{rows} csv rows, {events} events")
    return 0


if __name__ == "__main__":
    sys.exit(main())
