"""The run page's memory and bandwidth section: the memory peak and who holds it, the operator families
against the roofline, the cores' sampled utilisation; each part says why when its data is missing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from analyzer.report import memory_series, roofline_series
from analyzer.report.html_sections import esc, table
from analyzer.report.memory_peak import COLLECT_MEMORY, PEAK_COLUMNS, peak_cells

if TYPE_CHECKING:  # DuckDB is the main process's: a report worker draws pages from the series read for it
    import duckdb

# What to collect for each part when an export lacks it.
COLLECT_ROOFLINE = (
    "bytes and operations per operator: msprof --aic-metrics=Memory (main-memory bandwidth per operator) and "
    "--aic-metrics=ArithmeticUtilization (cube / vector operations), one collection each; torch_npu: "
    "experimental_config aic_metrics=AiCMetrics.Memory / AiCMetrics.ArithmeticUtilization"
)


def _note(text: str) -> str:
    return f'<p class="chart-ref">{esc(text)}</p>'


def _device(device_id: int) -> Any:
    return "—" if device_id < 0 else device_id


def _peak_html(peak: pl.DataFrame) -> str:
    if peak.is_empty():
        return _note(f"No memory records in this export; to collect them: {COLLECT_MEMORY}.")
    rows = [
        peak_cells(r, _device(r["device_id"]), r["component"], r["app_reserved_mb"], missing="—", no_share="—")
        for r in peak.iter_rows(named=True)
    ]
    return table(list(PEAK_COLUMNS), rows)


def _holders_html(holders: pl.DataFrame, peak: pl.DataFrame) -> str:
    if peak.is_empty():
        return ""
    if holders.is_empty():
        return _note("No operator_memory allocation is alive at the peak (or operator_memory was not written).")
    first = holders.row(0, named=True)
    peak_mb = peak["peak_allocated_mb"][0]
    intro = (
        f"{first['alive']} allocations recorded in operator_memory are alive at the peak allocated sample and hold "
        f"{first['alive_mb']:,.1f} MB of its {peak_mb:,.1f} MB (the rest is not in operator_memory: allocated "
        "before the profiled window, or not recorded per operator). "
        "The largest of them below; operator_memory records no tensor shapes."
    )
    rows = [
        (r["op_name"], r["size_mb"], r["alloc_ms"], "after the window" if r["release_ms"] is None else r["release_ms"])
        for r in holders.iter_rows(named=True)
    ]
    return _note(intro) + table(["operator", "size (MB)", "allocated at (ms)", "released at (ms)"], rows)


def _roofline_html(families: pl.DataFrame) -> str:
    if families.is_empty():
        return _note(f"Neither metric group in this export; to collect {COLLECT_ROOFLINE}.")
    rows = [
        (
            r["op_type"],
            r["launches"],
            r["time_us"],
            r["moved_mb"],
            r["achieved_gb_per_s"],
            r["gflop"],
            r["flop_per_byte"],
            r["attainable_us"],
            roofline_series.verdict(r["bandwidth_share"], r["compute_share"]),
        )
        for r in families.iter_rows(named=True)
    ]
    first = families.row(0, named=True)
    missing = []
    if families["moved_mb"].null_count() == families.height:
        missing.append("--aic-metrics=Memory (bytes per operator)")
    if families["gflop"].null_count() == families.height:
        missing.append("--aic-metrics=ArithmeticUtilization (operations per operator)")
    intro = (
        f"Against the chip's {first['hbm_gb_per_s']:,.0f} GB/s HBM and {first['cube_tflops']:,.0f} TFLOPS cube FP16 "
        f"peaks (ridge point {first['ridge_flop_per_byte']:,.0f} FLOP/byte); attainable time is the larger of bytes / "
        "peak bandwidth and operations / peak compute."
    )
    if missing:
        intro += f" For the other side of the roofline collect {' and '.join(missing)} as well."
    columns = ["operator type", "launches", "time (us)", "moved (MB)", "GB/s", "GFLOP", "FLOP/byte"]
    return _note(intro) + table([*columns, "attainable (us)", "where it stands"], rows)


def _cores_html(sampled: pl.DataFrame) -> str:
    if sampled.is_empty():
        return ""
    rows = sampled.select("core_kind", "metric", "average", "lowest", "highest", "cores").rows()
    intro = "Sampled per core over the whole window (sample-based mode: no time series in this export)."
    return (
        "<h3>Cores, sample-based</h3>"
        + _note(intro)
        + table(["cores", "metric", "average", "lowest", "highest", "n"], rows)
    )


def memory_section(con: duckdb.DuckDBPyConnection, run_id: str) -> str:
    """The section's HTML; call ``create_views(con)`` first (html.build_figures does)."""
    peak = memory_series.memory_peak(con, run_id)
    holders = memory_series.memory_at_peak(con, run_id)
    parts = [
        "<h3>Peak and who holds it</h3>",
        _peak_html(peak),
        _holders_html(holders, peak),
        "<h3>Operator families against the roofline</h3>",
        _roofline_html(roofline_series.roofline_families(con, run_id)),
        _cores_html(memory_series.sampled_core_utilization(con, run_id)),
    ]
    chart = '<p class="chart-ref">Over time: <a href="#chart-timeline">compute, bandwidth, memory and cores</a></p>'
    return f'<section id="memory"><h2>Memory and bandwidth</h2>{chart}{"".join(parts)}</section>'
