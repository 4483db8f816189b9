"""finalize._split_devices for many runs read together: each run of several devices becomes one run per
device, a statement per table for all of them, each device's rows in the order they get alone."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from analyzer.ingest.finalize import DEVICE_TABLES, device_run_id_sql

_IN_SPLIT = "run_id IN (SELECT run_id FROM _split_devices)"


def split_devices(con: duckdb.DuckDBPyConnection, devices: dict[str, list[int]]) -> None:
    """Split every run of ``devices`` holding several: rows naming a device go to that device's run, rows
    naming none to every device's run (after its own rows, as they are copied alone), as finalize does."""
    many = {run_id: found for run_id, found in devices.items() if len(found) > 1}
    if not many:
        return
    pairs = [(run_id, device) for run_id, found in many.items() for device in found]
    con.register("_split_devices", pa.table({"run_id": [p[0] for p in pairs], "device_id": [p[1] for p in pairs]}))
    try:
        for name in DEVICE_TABLES:
            _split_table(con, name)
    finally:
        con.unregister("_split_devices")


def _split_table(con: duckdb.DuckDBPyConnection, name: str) -> None:
    as_device = device_run_id_sql("run_id", "device_id")
    con.execute(f"UPDATE {name} SET run_id = {as_device} WHERE {_IN_SPLIT} AND device_id IS NOT NULL")
    # Each device's copies in the rows' order: a join gives its rows in an order of DuckDB's choosing.
    con.execute(
        f"INSERT INTO {name} BY NAME SELECT t.* REPLACE ({device_run_id_sql('d.run_id', 'd.device_id')} AS run_id) "
        f"FROM {name} t JOIN _split_devices d ON t.run_id = d.run_id WHERE t.{_IN_SPLIT} ORDER BY t.rowid, d.device_id"
    )
    con.execute(f"DELETE FROM {name} WHERE {_IN_SPLIT}")
