"""Device summary readers: l2_cache, ai_(vector_)core_utilization (long), hbm / ddr averages."""

from __future__ import annotations

from analyzer.ingest.csv.core_utilization import (
    load_ai_core_utilization,
    load_ai_vector_core_utilization,
)
from analyzer.ingest.readers import READERS
from tests.read_context import context_for, write_bytes


def test_l2_cache_real_na_hit_rate_is_null(real_dir, con):
    folder = real_dir / "torch_npu_level1_rank0_text/ASCEND_PROFILER_OUTPUT"
    ctx = context_for(folder)
    assert READERS["l2_cache"](con, (folder / "l2_cache.csv",), ctx) == 179
    first = con.execute(
        "SELECT device_id, stream_id, task_id, op_name, hit_ratio, victim_ratio FROM l2_cache ORDER BY task_id LIMIT 1"
    ).fetchall()
    assert first == [(None, 2, 11052, "trans_TransData_1", None, 0.23264)]
    assert ctx.problems == []


def test_l2_cache_msprof_device_column(tmp_path, con):
    path = write_bytes(
        tmp_path,
        "l2_cache_20260605161737.csv",
        "Device_id,Stream Id,Task Id,Hit Rate,Victim Rate,Op Name\n3,7,100,0.9,0.01,MatMul\n",
    )
    assert READERS["l2_cache"](con, (path,), context_for(tmp_path)) == 1
    assert con.execute("SELECT device_id, hit_ratio FROM l2_cache").fetchall() == [(3, 0.9)]


def test_core_utilization_wide_rows_become_long_and_na_gives_no_row(tmp_path, con):
    aic = write_bytes(
        tmp_path,
        "ai_core_utilization_20260605161737.csv",
        "Device_id,Core ID,mac_ratio,scalar_ratio,mte2_ratio,fixpipe_ratio\n"
        "0,Core0,0.5,0.1,N/A,0.2\n0,Core1,0.3,0.1,0.4,0.2\n0,Average,0.4,0.1,0.4,0.2\n",
    )
    aiv = write_bytes(
        tmp_path,
        "ai_vector_core_utilization_20260605161737.csv",
        "Device_id,Core ID,vec_ratio,memory_bound\n0,Core0,0.7,0.5\n0,Average,0.7,0.5\n",
    )
    ctx = context_for(tmp_path)
    assert load_ai_core_utilization(con, (aic,), ctx) == 11
    assert load_ai_vector_core_utilization(con, (aiv,), ctx) == 4
    core0 = con.execute(
        "SELECT metric, value FROM core_utilization WHERE core_kind = 'aic' AND core_id = 'Core0' ORDER BY metric"
    ).fetchall()
    assert core0 == [("fixpipe_ratio", 0.2), ("mac_ratio", 0.5), ("scalar_ratio", 0.1)]
    avg = con.execute(
        "SELECT device_id, value FROM core_utilization WHERE core_kind = 'aiv' "
        "AND core_id = 'Average' AND metric = 'vec_ratio'"
    ).fetchall()
    assert avg == [(0, 0.7)]
    assert ctx.problems == []


def test_core_utilization_without_core_id_is_reported(tmp_path, con):
    path = write_bytes(tmp_path, "ai_core_utilization_1.csv", "Device_id,mac_ratio\n0,0.5\n")
    ctx = context_for(tmp_path)
    assert load_ai_core_utilization(con, (path,), ctx) == 0
    assert len(ctx.problems) == 1 and "'Core ID'" in ctx.problems[0].problem


def test_hbm_and_ddr_averages_fill_bandwidth_summary(tmp_path, con):
    header = "Device_id,Metric,Read(MB/s),Write(MB/s)\n"
    hbm = write_bytes(
        tmp_path,
        "hbm_20260605161737.csv",
        header + "0,0,1200.5,300.0\n0,1,800.5,N/A\n0,Average,1000.5,300.0\n",
    )
    ddr = write_bytes(tmp_path, "ddr_20260605161737.csv", header + "0,Average,10.0,20.0\n")
    ctx = context_for(tmp_path)
    assert READERS["hbm"](con, (hbm,), ctx) == 3 and READERS["ddr"](con, (ddr,), ctx) == 1
    rows = con.execute(
        "SELECT memory, device_id, unit_id, read_mb_per_s, write_mb_per_s FROM bandwidth_summary "
        "ORDER BY memory, unit_id"
    ).fetchall()
    assert rows == [
        ("DDR", 0, "Average", 10.0, 20.0),
        ("HBM", 0, "0", 1200.5, 300.0),
        ("HBM", 0, "1", 800.5, None),
        ("HBM", 0, "Average", 1000.5, 300.0),
    ]
    assert con.execute("SELECT count(*) FROM counters").fetchall()[0][0] == 0  # averages, not a time series
