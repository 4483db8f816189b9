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
    """device_id item: the row's deviceId when the table has one, else ``row_device``."""
    if db.has(table, "deviceId"):
        return f"{int_or_null(f'{alias}.deviceId', 'INTEGER')} AS device_id"
    return f"{row_device(db, alias, table)} AS device_id"


# Tables whose connectionId is the connection of the tasks a row launched (PYTORCH_API's indexes CONNECTION_IDS).
_CONNECTED = ("CANN_API", "COMMUNICATION_OP")


def row_device(db: StagedDb, alias: str, table: str) -> str:
    """SQL scalar: the device of a row of a table without deviceId. A database of one device: that device. One of
    several (msprof's msprof_*.db of a node): the one device of the tasks of the row's connection (a communication
    op, a launch), else of the tasks its process launched (globalTid's pid, TASK.globalPid); NULL when they name no
    device or several, and the row then belongs to every device's run."""
    matches = []
    if table in _CONNECTED and db.has(table, "connectionId"):
        matches.append(("connectionId", f"{alias}.connectionId"))
    if db.has(table, "globalTid"):
        matches.append(("globalPid", f"(TRY_CAST({alias}.globalTid AS BIGINT) >> 32)"))
    return _tasks_device(db, matches)


def connection_device(db: StagedDb, connection: str) -> str:
    """SQL scalar: the device of the tasks of a connection id (``connection``: its SQL), as ``row_device``."""
    return _tasks_device(db, [("connectionId", connection)])


def _tasks_device(db: StagedDb, matches: list[tuple[str, str]]) -> str:
    """SQL scalar: in a database of several devices, the one device of the tasks whose TASK column equals the
    value, for the first (column, value SQL) of ``matches`` naming one; else the run's single device."""
    found = [
        _one_device(db.name("TASK"), f"t.{column} = {value}") for column, value in matches if db.has("TASK", column)
    ]
    if not found or not several_devices(db):
        return single_device(db)
    return f"coalesce({', '.join(found)})"


def _one_device(task: str, match: str) -> str:
    return (
        f"(SELECT CASE WHEN count(DISTINCT t.deviceId) = 1 THEN CAST(min(t.deviceId) AS INTEGER) END "
        f'FROM "{task}" t WHERE {match})'
    )


def several_devices(db: StagedDb) -> bool | None:
    """Whether TASK names several devices (None: TASK has no deviceId), asked once per database."""
    if not db.has("TASK", "deviceId"):
        return None
    if db.device_count is None:
        query = f'SELECT count(DISTINCT deviceId) FROM "{db.name("TASK")}"'
        db.device_count = db.con.execute(query).fetchall()[0][0]
    return db.device_count > 1
