"""The parse floor: DuckDB reads the same CSV and JSON files into typed tables, and nothing else.

Run as a child process by the benchmark:
``python bench/parse_floor.py --csv F... [--csv F...] [--json F...] [--json-objects F...]``.
Each ``--csv`` group (one kind: kernel_details / op_summary slices, msprof's task_time slices) is read
with types detected (numbers as numbers) in one scan per header line, as the engine reads many runs' files
(analyzer/ingest/csv/csv_group.py); the timeline JSON with the same essential event fields the engine
keeps (``ph, name, pid, tid, ts, dur, cat, id, args``), the other JSON files (metadata, communication)
parsed as whole objects.

Not one scan of a kind's files with ``union_by_name``: that detects every file's header and types apart,
work the engine does not do, which on many small files is a large part of the reading: the floor would
then be above what DuckDB needs.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

import duckdb

_EVENT_COLUMNS = (
    "{ph: 'VARCHAR', name: 'VARCHAR', pid: 'VARCHAR', tid: 'VARCHAR', ts: 'DECIMAL(38,3)', "
    "dur: 'DOUBLE', cat: 'VARCHAR', id: 'VARCHAR', args: 'JSON'}"
)


def read_floor(csv_groups: list[list[str]], json_paths: list[str], object_paths: list[str] = ()) -> tuple[int, int]:
    """Rows read into the typed CSV tables and the event table (the JSON objects parsed too)."""
    con = duckdb.connect(":memory:")
    rows = 0
    for n, paths in enumerate(csv_groups):
        for k, same in enumerate(_by_header(paths)):
            table = f"csv_rows_{n}_{k}"
            con.execute(f"CREATE TABLE {table} AS SELECT * FROM read_csv(?, header=true)", [same])
            rows += con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
    if object_paths:
        con.execute(
            "CREATE TABLE objects AS SELECT * FROM read_json_objects(?, maximum_object_size=268435456)",
            [list(object_paths)],
        )
    if not json_paths:
        return rows, 0
    con.execute(
        f"CREATE TABLE events AS SELECT * FROM read_json(?, format='array', records=true, "
        f"columns={_EVENT_COLUMNS}, maximum_object_size=16777216)",
        [json_paths],
    )
    return rows, con.execute("SELECT count(*) FROM events").fetchall()[0][0]


def _by_header(paths: list[str]) -> list[list[str]]:
    """The files grouped by their first line (header and encoding mark), groups in the order of their first file."""
    groups: dict[bytes, list[str]] = defaultdict(list)
    for path in paths:
        with open(path, "rb") as file:
            groups[file.readline().rstrip(b"\r\n")].append(path)
    return list(groups.values())


def main(argv: list[str] | None = None) -> int:
    # @FILE: the arguments one a line (thousands of files overflow a command line)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], fromfile_prefix_chars="@")
    parser.add_argument("--csv", nargs="+", action="append", required=True, help="one table's CSV files")
    parser.add_argument("--json", nargs="+", default=[], help="timeline JSON files (arrays of events)")
    parser.add_argument("--json-objects", nargs="+", default=[], help="other JSON files, parsed as objects")
    args = parser.parse_args(argv)
    rows, events = read_floor(args.csv, args.json, args.json_objects)
    print(f"{rows} csv rows, {events} events")
    return 0


if __name__ == "__main__":
    sys.exit(main())
