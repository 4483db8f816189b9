"""Nominal values of the Ascend chips (AI Core count, clock, HBM and link bandwidth), keyed by chip name
(declared in ``chip_table.toml``).

Rules read them through the helper table ``_run_nominal`` (one row per run: the row of the chip its
metadata names, else DEFAULT_CHIP), never as numbers of their own. ``--set chip.KEY=VALUE`` overrides
one value for every run (e.g. ``--set chip.hbm_gb_per_s=800`` for a 32 GB 910B4). The figures are the
vendor's published nominal ones; a run's own ``runs.ai_core_count`` wins over the table's.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

# The name `--set` and config files use for the chip table (chip.KEY=VALUE), beside rule names.
CHIP_KEY = "chip"
_TABLE = tomllib.loads(Path(__file__).with_name("chip_table.toml").read_text(encoding="utf-8"))
# Key -> (unit, meaning). The order is the column order of _run_nominal.
NOMINAL_KEYS: dict[str, tuple[str, str]] = {key: tuple(about) for key, about in _TABLE["keys"].items()}
# Chip name prefix -> nominal values; COMMON: the values every chip shares unless its row says otherwise.
CHIPS: dict[str, dict[str, float]] = _TABLE["chips"]
COMMON: dict[str, float] = _TABLE["common"]
DEFAULT_CHIP: str = _TABLE["default_chip"]


def chip_rows() -> list[tuple[Any, ...]]:
    """(chip prefix, value per NOMINAL_KEYS) for every chip of the table, in a fixed order.

    >>> chip_rows()[0][:3]
    ('Ascend310P', 8.0, 1080.0)
    """
    return [(name, *(float({**COMMON, **CHIPS[name]}.get(k, 0.0)) for k in NOMINAL_KEYS)) for name in sorted(CHIPS)]


def check_chip_overrides(values: dict[str, Any]) -> list[str]:
    """Problems with ``--set chip.KEY=VALUE`` overrides: unknown keys, values that are not positive numbers.

    >>> check_chip_overrides({"hbm_gb_per_s": 800, "aicore_mhz": -1})
    ['chip.aicore_mhz: -1 is not a positive number']
    """
    problems = []
    for key, value in values.items():
        if key not in NOMINAL_KEYS:
            problems.append(f"chip.{key}: unknown nominal value (known: {', '.join(NOMINAL_KEYS)})")
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            problems.append(f"chip.{key}: {value!r} is not a positive number")
    return problems


def run_nominal_sql(overrides: dict[str, Any] | None = None) -> str:
    """SQL of ``_run_nominal``: per run, the nominal values of its chip with ``overrides`` applied.

    The values are numbers checked by ``check_chip_overrides`` and the table's, written as SQL
    literals (a helper table is built once, before any statement binds parameters).
    """
    overrides = {k: float(v) for k, v in (overrides or {}).items() if k in NOMINAL_KEYS}
    values = ", ".join(f"('{name}', {', '.join(f'{v!r}::DOUBLE' for v in rest)})" for name, *rest in chip_rows())
    columns = ", ".join(NOMINAL_KEYS)

    def pick(k: str) -> str:
        if k == "ai_core_count":  # the run's own count wins over the table's
            value = f"CAST({overrides[k]!r} AS INTEGER)" if k in overrides else None
            return f"{value or 'coalesce(r.ai_core_count, CAST(c.ai_core_count AS INTEGER))'} AS {k}"
        return f"{overrides[k]!r}::DOUBLE AS {k}" if k in overrides else f"c.{k}"

    picked = ", ".join(pick(k) for k in NOMINAL_KEYS)
    return f"""
WITH t AS (SELECT * FROM (VALUES {values}) v(chip, {columns})),
-- every run of runs, and the runs that only ops names (a database filled table by table)
r AS (SELECT run_id, chip, ai_core_count FROM runs
      UNION ALL SELECT DISTINCT run_id, NULL, NULL FROM ops WHERE run_id NOT IN (SELECT run_id FROM runs)),
m AS (SELECT r.run_id, any_value(r.chip) AS run_chip, any_value(r.ai_core_count) AS ai_core_count,
             coalesce(arg_max(t.chip, length(t.chip)), '{DEFAULT_CHIP}') AS chip
      FROM r LEFT JOIN t ON starts_with(lower(r.chip), lower(t.chip))
      GROUP BY r.run_id)
SELECT r.run_id, r.chip, r.run_chip IS NULL OR r.run_chip <> r.chip AS chip_assumed, {picked}
FROM m r JOIN t c ON c.chip = r.chip"""
