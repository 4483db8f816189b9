"""Derive the chip-independent pipeline columns of ops (core, MTE, cube, vector, scalar time; bound pipe).

The definitions are documented on the columns in ``schema.toml``; this is their one implementation.
"""

from __future__ import annotations

import re

import duckdb


def _pipe(core: str, pipe: str, core_time: str) -> str:
    """Pipe time, from its time column or else from its ratio times the core's time."""
    return f"coalesce({core}_{pipe}_time_us, {core}_{pipe}_ratio * {core_time})"


_AIC = "aicore_time_us"
_AIV = "aiv_time_us"
_AIC_MTE = f"greatest({_pipe('aic', 'mte1', _AIC)}, {_pipe('aic', 'mte2', _AIC)}, {_pipe('aic', 'mte3', _AIC)})"
_AIV_MTE = f"greatest({_pipe('aiv', 'mte2', _AIV)}, {_pipe('aiv', 'mte3', _AIV)})"

_CORE = f"(CASE WHEN {_AIC} IS NULL AND {_AIV} IS NULL THEN NULL ELSE coalesce({_AIC}, 0) + coalesce({_AIV}, 0) END)"
_MTE = (
    f"(CASE WHEN {_AIC_MTE} IS NULL AND {_AIV_MTE} IS NULL THEN NULL "
    f"ELSE coalesce({_AIC_MTE}, 0) + coalesce({_AIV_MTE}, 0) END)"
)
_CUBE = _pipe("aic", "mac", _AIC)
_VECTOR = _pipe("aiv", "vec", _AIV)
_SCALAR = (
    f"(CASE WHEN {_pipe('aic', 'scalar', _AIC)} IS NULL AND {_pipe('aiv', 'scalar', _AIV)} IS NULL THEN NULL "
    f"ELSE coalesce({_pipe('aic', 'scalar', _AIC)}, 0) + coalesce({_pipe('aiv', 'scalar', _AIV)}, 0) END)"
)
_PIPES = f"[coalesce({_CUBE}, 0), coalesce({_VECTOR}, 0), coalesce({_SCALAR}, 0), coalesce({_MTE}, 0)]"

_DERIVED = {
    "core_time_us": _CORE,
    "mte_time_us": _MTE,
    "cube_time_us": _CUBE,
    "vector_time_us": _VECTOR,
    "scalar_time_us": _SCALAR,
    "mte_ratio": f"CASE WHEN {_CORE} > 0 AND {_MTE} IS NOT NULL THEN least({_MTE} / {_CORE}, 1.0) END",
    "pipeline_bound": f"""CASE
        WHEN {_CORE} IS NULL OR {_CORE} <= 0 THEN NULL
        WHEN {_CUBE} IS NULL AND {_VECTOR} IS NULL AND {_SCALAR} IS NULL AND {_MTE} IS NULL THEN NULL
        ELSE ['cube', 'vector', 'scalar', 'mte'][list_position({_PIPES}, list_max({_PIPES}))]
    END""",
}
# The ops columns the derivations read.
_INPUT_NAME = re.compile(r"\b(ai[cv]_\w+?_(?:time_us|ratio)|aicore_time_us|aiv_time_us)\b")
INPUTS: tuple[str, ...] = tuple(sorted(set(_INPUT_NAME.findall(" ".join(_DERIVED.values())))))


def derived_select() -> str:
    """SELECT items computing every derived column from the INPUTS columns (all must be in scope):
    readers of PMU rows derive while they insert, one pass instead of an UPDATE of millions of
    rows. DuckDB computes the repeated sub-expressions once per row (common subexpressions)."""
    return ", ".join(f"{expr} AS {name}" for name, expr in _DERIVED.items())


# For the rows no reader derived (SQLite exports, ops taken from the timeline): every derived
# column is still NULL while some input is not. Rows derived at insert, or without PMU data, stay.
DERIVE_SQL = f"""
UPDATE ops SET {", ".join(f"{name} = {expr}" for name, expr in _DERIVED.items())}
WHERE run_id = $run_id AND {" AND ".join(f"{name} IS NULL" for name in _DERIVED)}
  AND ({" OR ".join(f"{name} IS NOT NULL" for name in INPUTS)})
"""


def derive_pipeline(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Fill the derived pipeline columns of one run's ops rows that no reader derived."""
    con.execute(DERIVE_SQL, {"run_id": run_id})
