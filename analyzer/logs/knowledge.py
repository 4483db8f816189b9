"""The error knowledge (errors.toml) and host activities (activities.toml): loaded as data, matched in SQL."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import duckdb

from analyzer.row_inserts import insert_values

_HERE = Path(__file__).parent
ERRORS_FILE = _HERE / "errors.toml"
ACTIVITIES_FILE = _HERE / "activities.toml"
ACTIVITIES = ("memory_alloc", "compile", "host_setup")  # the gap causes a log record can give


@dataclass(frozen=True)
class ErrorEntry:
    """One entry of the error knowledge."""

    code: str
    family: str
    kind: str
    priority: int
    pattern: str
    meaning: str
    advice: str


@cache
def error_entries(path: Path = ERRORS_FILE) -> tuple[ErrorEntry, ...]:
    """The entries, most specific first (priority descending, then code), as the matching order."""
    entries = tomllib.loads(path.read_text(encoding="utf-8"))["error"]
    return tuple(sorted((ErrorEntry(**e) for e in entries), key=lambda e: (-e.priority, e.code)))


@cache
def activity_patterns(path: Path = ACTIVITIES_FILE) -> dict[str, str]:
    """activity -> one case-insensitive RE2 pattern (the entries of an activity joined); any_activity: all."""
    patterns: dict[str, list[str]] = {a: [] for a in ACTIVITIES}
    for entry in tomllib.loads(path.read_text(encoding="utf-8"))["activity"]:
        patterns[entry["activity"]].append(f"(?:{entry['pattern']})")
    joined = {a: "(?i)" + ("|".join(p) if p else "$^") for a, p in patterns.items()}
    # one pass decides for most records that no activity matches
    return {**joined, "any_activity": "(?i)" + "|".join(x for p in patterns.values() for x in p)}


def create_knowledge(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Fill log_error_codes for the run and the TEMP table _log_knowledge (idx = matching order)."""
    rows = [
        (i, e.code, e.family, e.kind, e.priority, e.pattern, e.meaning, e.advice) for i, e in enumerate(error_entries())
    ]
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _log_knowledge (idx INTEGER, code VARCHAR, family VARCHAR, kind VARCHAR, "
        "priority INTEGER, pattern VARCHAR, meaning VARCHAR, advice VARCHAR)"
    )
    insert_values(con, "_log_knowledge", rows)
    con.execute(
        "INSERT INTO log_error_codes BY NAME SELECT code, family, kind, priority, pattern, meaning, advice "
        "FROM _log_knowledge WHERE NOT EXISTS (SELECT 1 FROM log_error_codes) ORDER BY idx"
    )


def match_expression() -> tuple[str, dict[str, str]]:
    """SQL CASE giving the index of the first entry whose pattern matches ``message`` (patterns bound as
    parameters $k0.., so that DuckDB compiles each regular expression once), and its parameters (with
    $any_error, every pattern at once)."""
    entries = error_entries()
    whens = " ".join(f"WHEN regexp_matches(message, $k{i}) THEN {i}" for i in range(len(entries)))
    params = {f"k{i}": f"(?i){e.pattern}" for i, e in enumerate(entries)}
    # one pass decides for most warnings that no entry matches
    params["any_error"] = "(?i)" + "|".join(f"(?:{e.pattern})" for e in entries)
    return f"CASE {whens} END", params
