"""Derive the chip-independent pipeline columns of ops (core, MTE, cube, vector, scalar time; bound pipe).

The definitions are documented on the columns in ``schema.toml``; this is their one implementation.
"""

from __future__ import annotations

import re

import duckdb

from analyzer.ingest.sql_values import IN_RUNS

_AIC = "aicore_time_us"
_AIV = "aiv_time_us"
# Each pipe's time, from its time column or else from its ratio times its core's time; named
# _pipe_<core>_<pipe> where the derivations below read it.
_PIPE_TIMES = {
    f"_pipe_{core}_{pipe}": f"coalesce({core}_{pipe}_time_us, {core}_{pipe}_ratio * {core_time})"
    for core, core_time, pipes in (
        ("aic", _AIC, ("mac", "scalar", "mte1", "mte2", "mte3")),
        ("aiv", _AIV, ("vec", "scalar", "mte2", "mte3")),
    )
    for pipe in pipes
}


def _sum(a: str, b: str) -> str:
    """a + b, counting a NULL one as 0; NULL when both are."""
    return f"(CASE WHEN {a} IS NULL AND {b} IS NULL THEN NULL ELSE coalesce({a}, 0) + coalesce({b}, 0) END)"


_AIC_MTE = "greatest(_pipe_aic_mte1, _pipe_aic_mte2, _pipe_aic_mte3)"
_AIV_MTE = "greatest(_pipe_aiv_mte2, _pipe_aiv_mte3)"
# The derived columns from the pipe times, then those derived from these: each layer reads the
# columns of the one before by name.
_TIMES = {
    "core_time_us": _sum(_AIC, _AIV),
    "mte_time_us": _sum(_AIC_MTE, _AIV_MTE),
    "cube_time_us": "_pipe_aic_mac",
    "vector_time_us": "_pipe_aiv_vec",
    "scalar_time_us": _sum("_pipe_aic_scalar", "_pipe_aiv_scalar"),
}
_BOUND = ("cube_time_us", "vector_time_us", "scalar_time_us", "mte_time_us")
_PIPES = "[" + ", ".join(f"coalesce({name}, 0)" for name in _BOUND) + "]"
_SHARES = {
    "mte_ratio": (
        "CASE WHEN core_time_us > 0 AND mte_time_us IS NOT NULL THEN least(mte_time_us / core_time_us, 1.0) END"
    ),
    "pipeline_bound": f"""CASE
        WHEN core_time_us IS NULL OR core_time_us <= 0 THEN NULL
        WHEN {" AND ".join(f"{name} IS NULL" for name in _BOUND)} THEN NULL
        ELSE ['cube', 'vector', 'scalar', 'mte'][list_position({_PIPES}, list_max({_PIPES}))]
    END""",
}
_LAYERS = (_PIPE_TIMES, _TIMES, _SHARES)


def _inline(expr: str, names: dict[str, str]) -> str:
    """``expr`` with every column of ``names`` replaced by its (parenthesized) definition."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    return pattern.sub(lambda m: f"({names[m.group(1)]})", expr)


def _inlined() -> dict[str, str]:
    """Every derived column as one expression over the INPUTS columns alone."""
    known: dict[str, str] = {}
    for layer in _LAYERS:
        known |= {name: _inline(expr, known) if known else expr for name, expr in layer.items()}
    return {name: known[name] for layer in _LAYERS[1:] for name in layer}


_DERIVED = _inlined()
# The ops columns the derivations read.
_INPUT_NAME = re.compile(r"\b(ai[cv]_\w+?_(?:time_us|ratio)|aicore_time_us|aiv_time_us)\b")
INPUTS: tuple[str, ...] = tuple(sorted(set(_INPUT_NAME.findall(" ".join([*_PIPE_TIMES.values(), *_TIMES.values()])))))


def with_derived(select_sql: str) -> str:
    """SQL of the rows of ``select_sql`` (which holds every INPUTS column) with the derived columns
    added: readers of PMU rows derive while they insert, one pass instead of an UPDATE of millions of
    rows. One SELECT per layer, each naming the columns of the one below, keeps the statement small:
    DuckDB plans it in a fraction of the time the same definitions written out in full take, and
    computes each value once per row either way."""
    pipes = ", ".join(f"{expr} AS {name}" for name, expr in _PIPE_TIMES.items())
    times = ", ".join(f"{expr} AS {name}" for name, expr in _TIMES.items())
    shares = ", ".join(f"{expr} AS {name}" for name, expr in _SHARES.items())
    return (
        f"SELECT * EXCLUDE ({', '.join(_PIPE_TIMES)}), {shares} FROM ("
        f"SELECT *, {times} FROM (SELECT *, {pipes} FROM ({select_sql})))"
    )


# For the rows no reader derived (SQLite exports, ops taken from the timeline): every derived
# column is still NULL while some input is not. Rows derived at insert, or without PMU data, stay.
_UNDERIVED_ROWS = f"""{" AND ".join(f"{name} IS NULL" for name in _DERIVED)}
  AND ({" OR ".join(f"{name} IS NOT NULL" for name in INPUTS)})"""
# The UPDATE of the underived rows of the runs ``{runs}`` (an SQL condition) selects.
_DERIVE_SQL = f"""
UPDATE ops SET {", ".join(f"{name} = {expr}" for name, expr in _DERIVED.items())}
WHERE {{runs}} AND {_UNDERIVED_ROWS}
"""


def derive_pipeline(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Fill the derived pipeline columns of one run's ops rows that no reader derived."""
    _derive(con, "run_id = $run_id", {"run_id": run_id})


def derive_pipelines(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> None:
    """``derive_pipeline`` of many runs, in one statement."""
    _derive(con, IN_RUNS, {"runs": run_ids})


def _derive(con: duckdb.DuckDBPyConnection, runs: str, params: dict[str, object]) -> None:
    """The UPDATE, a long statement to plan, runs only when some row needs it (not for a CSV export's)."""
    if con.execute(f"SELECT EXISTS (SELECT 1 FROM ops WHERE {runs} AND {_UNDERIVED_ROWS})", params).fetchall()[0][0]:
        con.execute(_DERIVE_SQL.replace("{runs}", runs), params)
