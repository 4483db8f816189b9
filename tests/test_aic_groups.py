"""Which AI Core metric group and mode a run was collected with, when no metadata file says so: from the
columns its operators carry (every --aic-metrics group of the real native export), and the chip of an
info.json platform_version code."""

from __future__ import annotations

from pathlib import Path

import pytest

import analyzer
from analyzer.ingest.finalize import AIC_COUNTS, aic_metrics_of, key_sets
from analyzer.ingest.metadata.run_metadata import _platform_chip

# The real export's folder per group -> (aic_metrics, aic_mode) its run gets.
REAL_GROUPS = {
    "PROF_PipeUtilization": ("PipeUtilization", None),
    "PROF_ArithmeticUtilization": ("ArithmeticUtilization", None),
    "PROF_Memory": ("Memory", None),
    "PROF_MemoryL0": ("MemoryL0", None),
    "PROF_MemoryUB": ("MemoryUB", None),
    "PROF_L2Cache": ("L2Cache", None),
    "PROF_ResourceConflictRatio": ("ResourceConflictRatio", None),
    "PROF_Sample": (None, "sample-based"),
}


def test_every_real_group_is_named_read_together_and_alone(real_dir: Path) -> None:
    group = real_dir / "msprof_native_aic_metrics_2026"
    with analyzer.load(group) as trace:
        rows = trace.con.sql("SELECT source_path, aic_metrics, aic_mode FROM runs").fetchall()
    together = {next(k for k in REAL_GROUPS if k in Path(path).parts): (aic, mode) for path, aic, mode in rows}
    assert together == REAL_GROUPS
    for name in ("PROF_MemoryUB", "PROF_Sample"):
        (root,) = sorted(p for p in group.rglob(f"{name}/PROF_*") if p.is_dir())
        with analyzer.load(root) as trace:
            assert trace.con.sql("SELECT aic_metrics, aic_mode FROM runs").fetchall() == [REAL_GROUPS[name]]


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        (["aiv_ub_read_bw_vector_gb_per_s", "aic_ub_write_bw_scalar_gb_per_s"], "MemoryUB"),
        (["ub_read_bw_mte_gb_per_s"], "MemoryUB"),  # unprefixed, as older chips write it
        (["aiv_vec_bankgroup_cflt_ratio"], "ResourceConflictRatio"),
        (["r0_read_cache_hit", "write_cache_miss_allocate"], "L2Cache"),
        (["aic_read_local_l2_hit"], "L2Cache"),
        # near misses: the Memory group's own UB bandwidth, and a column of no group
        (["main_mem_read_bw_gb_per_s", "ub_read_bw_gb_per_s"], "Memory"),
        (["ub_read_bw_gb_per_s"], None),
        (["aic_cube_fops"], None),
    ],
)
def test_a_group_is_named_by_a_column_of_its_own(con, keys: list[str], expected: str | None) -> None:
    values = ", ".join(f"'{k}': 1.0" for k in keys)
    con.execute(f"INSERT INTO ops (run_id, op_type, extra_metrics) VALUES ('r', 'Add', MAP {{{values}}})")
    counts = con.execute(f"SELECT {AIC_COUNTS} FROM ops").fetchall()[0]
    assert (aic_metrics_of(counts) or key_sets(con, ["r"]).get("r")) == expected


def test_a_platform_version_code_names_its_chip_where_known_and_a_name_stays() -> None:
    assert _platform_chip("5") == "Ascend910B"
    assert _platform_chip("4") == "platform_version 4"
    assert _platform_chip("Ascend910B") == "Ascend910B"
