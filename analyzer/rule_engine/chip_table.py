"""Nominal values of the Ascend chips (AI Core count, clock, HBM and link bandwidth), keyed by chip name.

Rules read them through the helper table ``_run_nominal`` (views/chip.sql: one row per run: the row of the chip its
metadata names, else DEFAULT_CHIP), never as numbers of their own. ``--set chip.KEY=VALUE`` overrides
one value for every run (e.g. ``--set chip.hbm_gb_per_s=800`` for a 32 GB 910B4). The figures are the
vendor's published nominal ones; a run's own ``runs.ai_core_count`` wins over the table's.
"""

from __future__ import annotations

from typing import Any

# The name `--set` and config files use for the chip table (chip.KEY=VALUE), beside rule names.
CHIP_KEY = "chip"
# Key -> (unit, meaning). The order is the column order of _run_nominal.
NOMINAL_KEYS: dict[str, tuple[str, str]] = {
    "ai_core_count": ("", "AI Cores (cube cores) of the chip"),
    "aicore_mhz": ("MHz", "nominal AI Core clock"),
    "hbm_gb_per_s": ("GB/s", "HBM bandwidth, read + write"),
    "hccs_gb_per_s": ("GB/s", "on-board chip-to-chip link (HCCS) bandwidth, all links"),
    "roce_gb_per_s": ("GB/s", "network (RoCE) bandwidth per chip"),
    "launch_us": ("us", "typical host cost of launching one operator (dispatch, in eager mode)"),
    "gap_threshold_us": ("us", "device gaps at least this long are 'long gaps'; shorter ones are launch gaps"),
    "task_switch_us": ("us", "idle time the device itself needs between two tasks, however far ahead the host is"),
}

# Chip name prefix (case-insensitive, longest match wins) -> nominal values. Names as the exports
# write them: NPU_INFO / info.json say 'Ascend910B1', 'Ascend910B4', 'Ascend910', 'Ascend310P3'.
CHIPS: dict[str, dict[str, float]] = {
    "Ascend910B1": {"ai_core_count": 24, "aicore_mhz": 1800, "hbm_gb_per_s": 1600, "hccs_gb_per_s": 392},
    "Ascend910B2": {"ai_core_count": 24, "aicore_mhz": 1800, "hbm_gb_per_s": 1600, "hccs_gb_per_s": 392},
    "Ascend910B3": {"ai_core_count": 20, "aicore_mhz": 1800, "hbm_gb_per_s": 1600, "hccs_gb_per_s": 392},
    "Ascend910B4": {"ai_core_count": 20, "aicore_mhz": 1800, "hbm_gb_per_s": 800, "hccs_gb_per_s": 392},
    "Ascend910B": {"ai_core_count": 24, "aicore_mhz": 1800, "hbm_gb_per_s": 1600, "hccs_gb_per_s": 392},
    "Ascend910": {"ai_core_count": 32, "aicore_mhz": 1000, "hbm_gb_per_s": 1200, "hccs_gb_per_s": 90},
    "Ascend310P": {"ai_core_count": 8, "aicore_mhz": 1080, "hbm_gb_per_s": 204.8, "hccs_gb_per_s": 0},
}
# Values every chip shares unless its row says otherwise.
COMMON: dict[str, float] = {"roce_gb_per_s": 25.0, "launch_us": 20.0, "gap_threshold_us": 200.0, "task_switch_us": 2.0}
# The chip assumed when a run does not name one (torch_npu text exports do not).
DEFAULT_CHIP = "Ascend910B"


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
