"""Map raw PMU metric names (CSV headers or DB TASK_PMU_INFO names) to normalized column names."""

from __future__ import annotations

import re

from analyzer.ingest.schema import PIPE_COLUMN_NAMES

_UNIT_SUFFIXES = (
    ("(us)", "_us"),
    ("(GB/s)", "_gb_per_s"),
    ("(KB)", "_kb"),
    ("(%)", "_pct"),
    ("(MB/s)", "_mb_per_s"),
)
# Names whose normalized form is not just "lowercase + unit suffix".
_RENAMES = {
    "aic_total_time": "aicore_time_us",
    "total_time": "aicore_time_us",
    "aicore_time": "aicore_time_us",
    "aiv_total_time": "aiv_time_us",
    "aiv_time": "aiv_time_us",
    "total_cycles": "aic_total_cycles",
    "memory_bound": "memory_bound_ratio",
    "cube_utilization_pct": "cube_utilization_pct",
    "cube_utilization": "cube_utilization_pct",
}
_PREFIX = re.compile(r"^(aic|aiv)_")
# Unprefixed metrics of older chips (910/310P): the vector pipe goes to the aiv_ columns, the
# rest to the aic_ columns, since those chips run both on one AI Core.
_V1_VECTOR = re.compile(r"^vec_")


def normalize_metric(raw: str) -> str:
    """Normalized name of one PMU metric, whether it came from a CSV header or from the DB.

    >>> normalize_metric("aic_mte2_time(us)"), normalize_metric("aic_mte2_time")
    ('aic_mte2_time_us', 'aic_mte2_time_us')
    >>> normalize_metric("aic_total_time"), normalize_metric("cube_utilization(%)")
    ('aicore_time_us', 'cube_utilization_pct')
    >>> normalize_metric("mac_ratio"), normalize_metric("vec_time(us)")
    ('aic_mac_ratio', 'aiv_vec_time_us')
    >>> normalize_metric("aic_l0a_read_bw(GB/s)")
    'aic_l0a_read_bw_gb_per_s'
    """
    name = raw.strip()
    for suffix, repl in _UNIT_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)] + repl
            break
    name = re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower()
    if name in _RENAMES:
        return _RENAMES[name]
    if name.endswith("_extra"):
        name = name[: -len("_extra")]
    # DB names carry no unit. The name still gets the CSV's _us suffix; the DB reader converts
    # the DB's nanosecond values to microseconds.
    if name.endswith("_time") and not name.endswith("_us"):
        name += "_us"
    if _PREFIX.match(name) is None and name not in PIPE_COLUMN_NAMES:
        candidate = ("aiv_" if _V1_VECTOR.match(name) else "aic_") + name
        if candidate in PIPE_COLUMN_NAMES:
            return candidate
    return name


def is_pipe_column(name: str) -> bool:
    """True when a normalized metric has its own column in ops (else it goes to extra_metrics)."""
    return name in PIPE_COLUMN_NAMES
