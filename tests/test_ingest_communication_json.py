"""communication.json -> comm_ops (real files, hand-written edge cases); the matrix file."""

from __future__ import annotations

from analyzer.ingest.communication.communication_json import load_communication, load_communication_matrix
from tests.read_context import context_for, write_bytes

LEVEL1 = "torch_npu_level1_rank0_text/ASCEND_PROFILER_OUTPUT"


def test_communication_real_step_50_has_four_allreduce_ops(real_dir, con):
    folder = real_dir / LEVEL1
    ctx = context_for(folder)
    assert load_communication(con, (folder / "communication.json",), ctx) == 4
    rows = con.execute("SELECT DISTINCT step_id, op_kind, group_name FROM comm_ops").fetchall()
    assert rows == [(50, "collective", "17522688603477080586")]
    first = con.execute(
        "SELECT op_name, start_ns, elapse_us, wait_us, sync_us, wait_ratio, sync_ratio, "
        "transit_size_mb, bandwidth_gb_per_s, transport FROM comm_ops ORDER BY start_ns LIMIT 1"
    ).fetchall()[0]
    assert first[:2] == ("hcom_allReduce__586_0_1", 1736408883732241500)
    assert abs(first[2] - 79089.52021875) < 1e-6  # 79.08952021875 ms
    assert abs(first[3] - 5646.63284375) < 1e-6 and abs(first[4] - 5615.69221875) < 1e-6
    assert first[5:7] == (0.9594, 0.9591)
    assert abs(first[7] - 28.647232) < 1e-9  # HCCS only: SDMA repeats it and is not added
    assert first[8:] == (15.7676, "HCCS")
    assert ctx.problems == [] and ctx.files_read == ["communication.json"]


def test_communication_real_2023_p2p_over_rdma_and_total_skipped(real_dir, con):
    folder = real_dir / "torch_npu_memoryl0_2023/ASCEND_PROFILER_OUTPUT"
    assert load_communication(con, (folder / "communication.json",), context_for(folder)) == 28
    p2p = con.execute(
        "SELECT op_name, step_id, transport, transit_size_mb, bandwidth_gb_per_s FROM comm_ops WHERE op_kind = 'p2p'"
    ).fetchall()
    assert p2p == [("hcom_send__822_0", 2, "RDMA", 20.97152, 24.2778)]
    assert con.execute("SELECT count(*) FROM comm_ops WHERE op_name LIKE 'Total%'").fetchall()[0][0] == 0
    idle = con.execute(
        "SELECT transport, bandwidth_gb_per_s, transit_size_mb FROM comm_ops WHERE op_name = 'hcom_broadcast__483_0'"
    ).fetchall()
    assert idle == [(None, None, 0.0)]  # nothing moved: no transport, bandwidth unknown rather than 0


def test_communication_step_key_without_number_gives_null_step(tmp_path, con):
    # Written as text: a Python float cannot hold ...289.125 at this magnitude, the reader must.
    text = (
        '{"step": {"collective": {"hcom_allGather_1@g": {"Communication Time Info": '
        '{"Start Timestamp(us)": 1780676244313289.125, "Elapse Time(ms)": 1.5}, '
        '"Communication Bandwidth Info": '
        '{"RDMA": {"Transit Size(MB)": 2, "Bandwidth(GB/s)": 3.5}}}}}}'
    )
    path = write_bytes(tmp_path, "communication.json", text)
    assert load_communication(con, (path,), context_for(tmp_path)) == 1
    row = con.execute(
        "SELECT step_id, op_name, group_name, start_ns, elapse_us, transit_us, transport FROM comm_ops"
    ).fetchall()
    assert row == [(None, "hcom_allGather_1", "g", 1780676244313289125, 1500.0, None, "RDMA")]


def test_communication_truncated_json_is_reported_with_place(tmp_path, con):
    path = write_bytes(tmp_path, "communication.json", '{"step1": {"collective": {"a@b": {')
    ctx = context_for(tmp_path)
    assert load_communication(con, (path,), ctx) == 0
    assert [(p.file, p.severity) for p in ctx.problems] == [("communication.json", "error")]
    assert ctx.problems[0].location.startswith("line 1 column")
    assert ctx.files_read == []


def test_communication_matrix_real_file_is_recorded_not_loaded(real_dir, con):
    folder = real_dir / LEVEL1
    ctx = context_for(folder)
    assert load_communication_matrix(con, (folder / "communication_matrix.json",), ctx) == 0
    assert ctx.files_read == ["communication_matrix.json"] and ctx.problems == []
