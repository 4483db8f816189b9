"""Run metadata recorded inside SQLite exports (NPU_INFO, RANK_DEVICE_MAP, META_DATA) -> ctx.facts for the runs row."""

from __future__ import annotations

from analyzer.ingest.model import ReadContext
from analyzer.ingest.sqlite.sqlite_open import StagedDb

# META_DATA names (lower-cased) -> RunMetadata fields.
_META_FIELDS = {
    "cann_version": "cann_version",
    "torch_npu_version": "torch_npu_version",
    "pta_version": "torch_npu_version",
}


def _chip(db: StagedDb) -> str | None:
    """The chip of the run's device (NPU_INFO.id is the device id); the only name when all agree."""
    if not db.has("NPU_INFO", "id", "name"):
        return None
    npu = f'"{db.name("NPU_INFO")}"'
    names = [
        r[0]
        for r in db.con.execute(
            f"SELECT DISTINCT trim(CAST(name AS VARCHAR)) FROM {npu} WHERE name IS NOT NULL ORDER BY 1"
        ).fetchall()
    ]
    if len(names) == 1:
        return names[0]
    if db.has("TASK", "deviceId"):
        row = db.con.execute(
            f"SELECT any_value(trim(CAST(n.name AS VARCHAR))) FROM {npu} n "
            f'WHERE n.id = (SELECT min(deviceId) FROM "{db.name("TASK")}")'
        ).fetchone()
        return row[0] if row else None
    return None


def _rank(db: StagedDb) -> int | None:
    if not db.has("RANK_DEVICE_MAP", "rankId"):
        return None
    ranks = [
        r[0]
        for r in db.con.execute(
            f'SELECT DISTINCT TRY_CAST(rankId AS INTEGER) FROM "{db.name("RANK_DEVICE_MAP")}" '
            f"WHERE TRY_CAST(rankId AS INTEGER) >= 0"
        ).fetchall()
    ]
    return ranks[0] if len(ranks) == 1 else None


def _meta_data(db: StagedDb) -> dict[str, str]:
    if not db.has("META_DATA", "name", "value"):
        return {}
    rows = db.con.execute(
        f'SELECT CAST(name AS VARCHAR), CAST(value AS VARCHAR) FROM "{db.name("META_DATA")}"'
    ).fetchall()
    return {name: value for name, value in rows if name and value}


def record_run_facts(db: StagedDb, ctx: ReadContext) -> None:
    """Put what the database says about the run into ``ctx.facts`` (RunMetadata field names)."""
    facts: dict[str, object] = {}
    chip = _chip(db)
    if chip:
        facts["chip"] = chip
    rank = _rank(db)
    if rank is not None:
        facts["rank_id"] = rank
    meta = _meta_data(db)
    for name, value in meta.items():
        target = _META_FIELDS.get(name.lower())
        if target:
            facts[target] = value
    if "SCHEMA_VERSION" in meta:
        facts["db_schema_version"] = meta["SCHEMA_VERSION"]
    if db.has("TASK_PMU_INFO"):
        facts["aic_mode"] = "task-based"
    for key, fact in facts.items():
        ctx.facts.setdefault(key, fact)
