"""Nominal values of the Ascend chips (AI Core count, clock, HBM and link bandwidth), keyed by chip name
(declared in ``chip_table.toml``).

Rules read them through the helper table ``_run_nominal`` (views/chip.sql: one row per run: the row of the chip its
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


def chip_table_rows(overrides: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    """The rows of the TEMP table ``_chip_table`` that ``_run_nominal`` reads (views/chip.sql): per chip,
    its values with ``overrides`` (checked by ``check_chip_overrides``) applied, whether it is DEFAULT_CHIP,
    and whether ai_core_count was overridden (then it wins over a run's own count).

    >>> chip_table_rows({"hbm_gb_per_s": 800})[0][:4], chip_table_rows()[0][-2:]
    (('Ascend310P', 8.0, 1080.0, 800.0), (False, False))
    """
    given = {k: float(v) for k, v in (overrides or {}).items() if k in NOMINAL_KEYS}
    forced = "ai_core_count" in given
    return [
        (name, *(given.get(k, v) for k, v in zip(NOMINAL_KEYS, values, strict=True)), name == DEFAULT_CHIP, forced)
        for name, *values in chip_rows()
    ]
