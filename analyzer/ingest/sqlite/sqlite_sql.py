"""SQL building blocks shared by the SQLite export readers: sentinels, exact ns, the run's device."""

from __future__ import annotations

from analyzer.ingest.sqlite.sqlite_open import StagedDb

NONE_IDS = "(4294967295, 18446744073709551615, -1)"
MB = 1048576  # bytes; msprof converts with 1024 x 1024
KB = 1024


def int_or_null(expr: str, sql_type: str = "BIGINT") -> str:
    """An integer column with the 'none' sentinels (UINT32_MAX, UINT64_MAX, -1) as NULL."""
    v = f"TRY_CAST({expr} AS HUGEINT)"
    return f"CASE WHEN {v} IN {NONE_IDS} THEN NULL ELSE TRY_CAST({v} AS {sql_type}) END"


def exact_ns(expr: str) -> str:
    """An exact BIGINT ns from an INTEGER, NUMERIC or TEXT column (PYTORCH_API.startNs is TEXT)."""
    return f"coalesce(TRY_CAST(trim(CAST({expr} AS VARCHAR)) AS BIGINT), TRY_CAST({expr} AS BIGINT))"


def window(alias: str, start: str = "startNs", end: str = "endNs") -> list[str]:
    """start_ns, end_ns and dur_us items of an event with ns start and end columns."""
    s, e = exact_ns(f"{alias}.{start}"), exact_ns(f"{alias}.{end}")
    return [f"{s} AS start_ns", f"{e} AS end_ns", f"({e} - {s}) / 1000.0 AS dur_us"]


def single_device(db: StagedDb) -> str:
    """SQL scalar: the one deviceId of TASK, NULL when there are several or none."""
    if not db.has("TASK", "deviceId"):
        return "CAST(NULL AS INTEGER)"
    return (
        f"(SELECT CASE WHEN count(DISTINCT deviceId) = 1 THEN CAST(min(deviceId) AS INTEGER) END "
        f'FROM "{db.name("TASK")}")'
    )


def device_of(db: StagedDb, alias: str, table: str) -> str:
    """device_id item: the row's deviceId when the table has one, else the run's single device."""
    if db.has(table, "deviceId"):
        return f"{int_or_null(f'{alias}.deviceId', 'INTEGER')} AS device_id"
    return f"{single_device(db)} AS device_id"
