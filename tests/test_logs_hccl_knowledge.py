"""HCCL / runtime messages that carry no code get their family's code, and a worker-N folder is a node of ranks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.ingest.database import connect
from analyzer.logs.reader import load_logs

# One message per pattern family, in the shape multi-rank HCCL jobs write them (ids, IPs and sizes made up),
# with the code and kind the knowledge must give it.
MESSAGES = [
    ("[7][9][Heartbeat]cqe err status[12], time:[2024-03-01 10:00:00.000001], ip:[10.0.0.9]", "EI0013", "fault"),
    (
        "[9][TaskException][AICPU]base information is streamId:4, sqid:5, type:SDMA, localRank:1, remoteRank:2",
        "EI0012",
        "fault",
    ),
    (
        "[9]Task {devId: 1 streamId: 4 sqId: 5 type: 2} run failed of exception, idx:[0], info:[errorCode :10]",
        "507018",
        "fault",
    ),
    (
        "[9][TaskException]base information is streamId:4, type:NOTIFY WAIT, localRank:1, remoteRank:0, notifyId:7",
        "EI0002",
        "timeout",
    ),
    (
        'checkDispatch: "[PTA]:"Process group work ALL_REDUCE, seq_num 12 dispatch timeout. device 3"',
        "EI0002",
        "timeout",
    ),
    ("[9][Wait][LinkEstablish]wait socket establish timeout, role[0] rank[2] timeout[120]", "EI0006", "timeout"),
    (
        "[9][Wait][P2PConnected]connected p2p timeout, timeout:120 s. local logicDevid:0, remote physic id:1.",
        "EI0006",
        "timeout",
    ),
    ("[9]   _________________________LINK_ERROR_INFO___________________________", "EI0006", "timeout"),
    ("[9]   |  10.0.0.2(1)   |   10.0.0.1(0)   |  client  | no connect |", "EI0006", "timeout"),
    ("[9][Recv][RaSocket]errNo[0x000000000500000d] recv fail, data[0xfff0], size[2239]", "EI0006", "timeout"),
    (
        "[9][Create][DestLink]Transport init error! createLink para:rank[3]-localUserrank[3], dst_rank[0]",
        "EI0009",
        "timeout",
    ),
    (
        "[9][Create]errNo[0x0000000005000006] transport create fail in thread, local rank[3] remote rank[0]",
        "EI0009",
        "timeout",
    ),
    (
        "[9][Check][Link]the link status of nic port 2 is down, please check the optical module",
        "HCCL_LINK_DOWN",
        "fault",
    ),
    ("[9][Heartbeat]heartbeat lost, remote rank[5], ip[10.0.0.5] no response for 30 s", "507010", "timeout"),
]


def _record(pid: int, second: int, level: str, text: str) -> str:
    return f"[{level}] HCCL({pid},python3):2024-03-01-10:00:{second:02d}.000.000 [x.cc:1] {text}\n"


def test_each_hccl_message_gets_its_family_code_and_kind(tmp_path):
    plog = tmp_path / "debug" / "plog" / "plog-9_20240301100000000.log"
    plog.parent.mkdir(parents=True)
    plog.write_text("".join(_record(9, i, "ERROR", m) for i, (m, _, _) in enumerate(MESSAGES)), encoding="utf-8")
    con = connect()
    load_logs(con, tmp_path, "t")
    got = con.execute("SELECT error_code, error_kind FROM log_events ORDER BY line_no").fetchall()
    assert got == [(code, kind) for _, code, kind in MESSAGES]


def test_near_misses_stay_unknown_or_generic(tmp_path):
    # INFO-level settings and plain words must not be taken for the faults above
    plog = tmp_path / "debug" / "plog" / "plog-9_20240301100000000.log"
    plog.parent.mkdir(parents=True)
    plog.write_text(
        _record(9, 0, "INFO", "HCCL_EXEC_TIMEOUT set by environment to [600]s")
        + _record(9, 1, "ERROR", "[9][Heartbeat]send heartbeat frame to peer, seq 12")
        + _record(9, 2, "ERROR", "[9]SDMA copy of 12 bytes scheduled on stream 4")
        + _record(9, 3, "ERROR", "[9]link up on nic port 2"),
        encoding="utf-8",
    )
    con = connect()
    load_logs(con, tmp_path, "t")
    assert con.execute("SELECT count(*) FROM log_events WHERE error_code IS NOT NULL").fetchall() == [(0,)]


def _plog(folder: Path, name_pid: int, records: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"plog-{name_pid}_20240301100000000.log").write_text("".join(records), encoding="utf-8")


def _setup(pid: int, rank: int, width: int = 8) -> str:
    return _record(
        pid, 0, "INFO", f"[{pid}][HCCL_TRACE]SetupAgent rankNum[{width}], rank[{rank}], logicDevId[{rank % 4}]"
    )


@pytest.mark.slow
def test_a_worker_folder_is_a_node_its_processes_ranks_come_from_hccl(tmp_path):
    job = tmp_path / "job"
    # node 0 holds ranks 4 and 5; node 1 holds rank 0 in a process of the same pid as node 0's rank 4
    _plog(job / "worker-0" / "run" / "plog", 100, [_setup(100, 4), _setup(100, 1, width=2)])  # + a sub-group
    _plog(job / "worker-0" / "run" / "plog", 101, [_setup(101, 5)])
    _plog(job / "worker-1" / "run" / "plog", 100, [_setup(100, 0)])
    _plog(job / "worker-0" / "debug" / "plog", 101, [_record(101, 9, "ERROR", "[1][Heartbeat]cqe err status[12]")])
    # a debug log whose records carry another pid than its name: the name's process gives the rank
    _plog(job / "worker-1" / "debug" / "plog", 100, [_record(903, 12, "ERROR", "[2]wait socket establish timeout")])
    con = connect()
    load_logs(con, job, "t")
    got = con.execute(
        "SELECT f.node_id, e.pid, e.rank_id FROM log_events e JOIN log_files f USING (run_id, file_id) "
        "ORDER BY f.node_id, e.pid, e.rank_id"
    ).fetchall()
    assert sorted(set(got)) == [(0, 100, 4), (0, 101, 5), (1, 100, 0), (1, 903, 0)]
    assert main(["logs", str(job), "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    doc = json.loads((tmp_path / "out" / "job" / "logs.json").read_text())
    [first] = [f for f in doc["findings"] if f["code"] == "LOG002"]
    assert first["subject"] == "rank 5" and first["details"]["waited_ranks"] == "0"
    assert first["details"]["quiet_ranks"] == "4"


@pytest.mark.parametrize("folder", ["worker", "node"])
def test_without_hccl_init_records_a_node_folder_still_counts_as_a_rank(tmp_path, folder):
    for n, second in ((0, 5), (1, 9)):
        _plog(
            tmp_path / f"{folder}-{n}" / "debug" / "plog",
            50 + n,
            [_record(50 + n, second, "ERROR", "[1]notify wait timeout")],
        )
    con = connect()
    load_logs(con, tmp_path, "t")
    assert con.execute("SELECT DISTINCT rank_id FROM log_events ORDER BY 1").fetchall() == [(0,), (1,)]


def _job_of_waiting_ranks(job: Path, naming: list[tuple[int, str]]) -> None:
    """Node 0 holds ranks 0..3 (devices 0..3, pids 200+r); each (rank, text) is an error that rank writes."""
    for rank in range(4):
        setup = _record(
            200 + rank, 0, "INFO", f"[1]SetupAgent rankNum[4], rank[{rank}], logicDevId[{rank}], phydevId[{rank}]"
        )
        errors = [_record(200 + r, 10 + r, "ERROR", text) for r, text in naming if r == rank]
        _plog(job / "worker-0" / "debug" / "plog", 200 + rank, [setup, *errors])


@pytest.mark.slow
def test_errors_name_their_peer_by_rank_link_row_or_device(tmp_path):
    job = tmp_path / "job"
    _job_of_waiting_ranks(
        job,
        [
            (0, "[1][Create]errNo[0x6] transport create fail in thread, local rank[0] remote rank[3]"),
            (1, "[1]   |  10.0.0.4(3)   |   10.0.0.2(1)   |  client  | no connect |"),
            (2, "[1][Wait][P2PConnected]connected p2p timeout, timeout:120 s. local logicDevid:2, remote physic id:3."),
            (3, "[1][TaskException]base information is type:NOTIFY WAIT, localRank:3, remoteRank:4294967295"),
        ],
    )
    _plog(
        job / "worker-0" / "debug" / "plog", 299, [_record(299, 30, "ERROR", "[1]notify wait timeout, remote rank:[1]")]
    )
    con = connect()
    load_logs(con, job, "t")
    got = con.execute("SELECT rank_id, peer_rank FROM log_events WHERE level = 'ERROR' ORDER BY rank_id").fetchall()
    assert got == [(0, 3), (1, 3), (2, 3), (3, None), (None, 1)]  # pid 299 names no rank of its own
    assert main(["logs", str(job), "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    [job_finding] = [
        f for f in json.loads((tmp_path / "out" / "job" / "logs.json").read_text())["findings"] if f["code"] == "LOG002"
    ]
    assert (
        job_finding["subject"] == "rank 3"
        and "could not reach (their errors name it: ranks 0, 1, 2" in job_finding["message"]
    )


def test_one_rank_naming_a_peer_is_not_enough(tmp_path):
    # the near miss: a single rank's pointer does not outweigh who reported first
    job = tmp_path / "job"
    _job_of_waiting_ranks(
        job,
        [
            (1, "[1][Wait][LinkEstablish]wait socket establish timeout, role[0] rank[1] timeout[120]"),
            (2, "[1][Create]errNo[0x6] transport create fail in thread, local rank[2] remote rank[3]"),
        ],
    )
    assert main(["logs", str(job), "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    [job_finding] = [
        f for f in json.loads((tmp_path / "out" / "job" / "logs.json").read_text())["findings"] if f["code"] == "LOG002"
    ]
    assert job_finding["subject"] == "rank 1" and "reported first" in job_finding["message"]
