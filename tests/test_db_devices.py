"""A profiler database holding several devices (msprof's msprof_*.db of a node): rows without a deviceId
(communication ops, host APIs, framework ops) go to the run of the device their connection's or process's
tasks ran on, so each device gets the diagnosis of its own database alone.

Built from the real level1 database and from generated ones: the same data again as device 1, launched by
another process (its own pid and connection ids), as msprof writes the devices of several processes into one
database."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from analyzer.cli import main

DB = Path("torch_npu_level1_rank0_db/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db")
PROF = "PROF_000001_20250109074803000_ABCDEFGH"
OFFSET = 10**7  # device 1's task, connection and op ids: the first device's, moved past them
PID = 4136493  # device 1's process (the real one is 3136493)
DEVICE_TABLES = ("ACC_PMU", "AICORE_FREQ", "HBM", "LLC", "MEMORY_RECORD", "NPU_MEM", "NPU_MODULE_MEM")
DEVICE_TABLES += ("NPU_OP_MEM", "OP_MEMORY", "SOC_BANDWIDTH_LEVEL")


def _export(source: Path, root: Path, devices: int, own_process: bool = True, comm_connection: bool = True) -> Path:
    """A PROF folder whose msprof_*.db is the profiler database ``source``, its data copied as device 1 when
    ``devices`` is 2 (the tables it lacks left out). ``own_process``: device 1's tasks and host rows have a
    process of their own (else the first's); ``comm_connection``: the communication ops keep their connection
    ids (else NULL)."""
    db = root / PROF / "msprof_20250109074810.db"
    db.parent.mkdir(parents=True)
    shutil.copyfile(source, db)
    if devices == 1:
        return root
    with closing(sqlite3.connect(db)) as c, c:  # committed, then closed: no -wal left beside it
        (pid,) = c.execute("SELECT min(globalPid) FROM TASK").fetchone()
        tid = f"(({PID if own_process else pid} << 32) | (globalTid & 4294967295))"

        def copy(table: str, changed: dict[str, str]) -> None:
            cols = [r[1] for r in c.execute(f'PRAGMA table_info("{table}")') if r[1] != "id" or "id" in changed]
            if not cols:
                return  # a table this database lacks
            values = ", ".join(changed.get(col, f'"{col}"') if col in changed else f'"{col}"' for col in cols)
            c.execute(f'INSERT INTO "{table}" ({", ".join(cols)}) SELECT {values} FROM "{table}"')

        task, connection = f"globalTaskId + {OFFSET}", f"connectionId + {OFFSET}"
        process = str(PID if own_process else pid)
        copy("TASK", {"deviceId": "1", "connectionId": connection, "globalTaskId": task, "globalPid": process})
        copy("COMPUTE_TASK_INFO", {"globalTaskId": task})
        copy("TASK_PMU_INFO", {"globalTaskId": task})
        copy("COMMUNICATION_TASK_INFO", {"globalTaskId": task, "opId": f"opId + {OFFSET}"})
        copy("COMMUNICATION_OP", {"connectionId": connection, "opId": f"opId + {OFFSET}"})
        copy("CANN_API", {"connectionId": connection, "globalTid": tid})
        copy("PYTORCH_API", {"connectionId": connection, "globalTid": tid})
        copy("CONNECTION_IDS", {"id": f"id + {OFFSET}", "connectionId": connection})
        copy("connectionCats", {"connectionId": connection})
        copy("OVERLAP_ANALYSIS", {"deviceId": "1"})
        for table in DEVICE_TABLES:
            has_tid = "globalTid" in [r[1] for r in c.execute(f'PRAGMA table_info("{table}")')]
            copy(table, {"deviceId": "1", **({"globalTid": tid} if has_tid else {})})
        c.execute("INSERT INTO NPU_INFO SELECT 1, name FROM NPU_INFO")
        c.execute("INSERT INTO RANK_DEVICE_MAP VALUES (1, 1)")
        if not comm_connection:
            c.execute("UPDATE COMMUNICATION_OP SET connectionId = NULL")
    return root


def _diagnosis(out: Path, device: str = "") -> str:
    """The findings and summary of the run (of ``device``, e.g. 'dev1'), its run id and device left out."""
    (path,) = [p for p in out.rglob("diagnosis.json") if device in p.parent.name]
    d = json.loads(path.read_text())
    text = json.dumps({"findings": d["findings"], "summary": d["summary"]}, sort_keys=True)
    return re.sub(rf'{PROF}(/dev\d)?|"device_id": \d|\bdevice \d\b', "", text)


def _each_device_as_alone(source: Path, tmp: Path) -> None:
    for devices in (1, 2):
        export = _export(source, tmp / f"in{devices}", devices)
        assert main(["diagnose", str(export), "--out", str(tmp / f"out{devices}"), "--format", "json"]) == 0
    alone = _diagnosis(tmp / "out1")
    assert _diagnosis(tmp / "out2", "dev0") == alone
    assert _diagnosis(tmp / "out2", "dev1") == alone


def test_each_device_of_a_two_device_database_gets_its_own_diagnosis(real_dir: Path, tmp_path: Path):
    _each_device_as_alone(real_dir / DB, tmp_path)


@pytest.mark.slow
def test_each_device_of_a_generated_two_device_database_gets_its_own_diagnosis(tmp_path: Path):
    # host APIs of two processes in the gaps of several streams; the generated databases hold no communication
    # tasks, so the communication ops are the real database's test above
    from fixtures.generator import write_export

    write_export("gappy_multistream", tmp_path / "gen", export_type="db", seed=23)
    (source,) = (tmp_path / "gen").rglob("ascend_pytorch_profiler_*.db")
    _each_device_as_alone(source, tmp_path)


def test_near_miss_rows_of_a_process_and_connection_of_both_devices_stay_every_devices(real_dir: Path, tmp_path):
    # one process drives both devices and the communication ops name no connection: nothing says whose they are,
    # so each device's run holds both copies; a launch still names its device by its connection
    import analyzer

    host = "SELECT count(*), count(*) FILTER (WHERE connection_id IN (SELECT connection_id FROM timeline "
    host += "WHERE kind = 'device_task')) FROM timeline WHERE kind = 'host_api'"
    with analyzer.load(_export(real_dir / DB, tmp_path / "one", 1)) as trace:
        ((apis, launches),) = trace.con.sql(host).fetchall()
        (comm,) = trace.con.sql("SELECT count(*) FROM ops WHERE task_type = 'COMMUNICATION'").fetchall()[0]
    with analyzer.load(_export(real_dir / DB, tmp_path / "two", 2, own_process=False, comm_connection=False)) as trace:
        counts = trace.con.sql(
            "SELECT r.device_id, (SELECT count(*) FROM ops o WHERE o.run_id = r.run_id "
            "AND o.task_type = 'COMMUNICATION'), (SELECT count(*) FROM timeline t WHERE t.run_id = r.run_id "
            "AND t.kind = 'host_api') FROM runs r ORDER BY 1"
        ).fetchall()
    assert launches and comm
    assert counts == [(d, 2 * comm, 2 * apis - launches) for d in (0, 1)]
