"""A timeline holding several devices (msprof's one PROF folder): each device's run holds its own device's counter
samples and host rows only, as the same run's torch_npu rank exports hold them, and is diagnosed as the device's
export alone is; a track whose pid names no device of the run keeps its rows in every device's run, none lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import analyzer
from fixtures.generator import truth, write_export, write_runs

SEED = 27  # a seed the counters were not developed on
_HBM = "SELECT run_id, device_id, counter, count(*), sum(value) FROM counters WHERE counter LIKE 'hbm%' GROUP BY ALL"


def _hbm(root: Path) -> dict[tuple[str, str], tuple]:
    """Per (run's device part or rank, counter): (device_id, samples, sum of values)."""
    trace = analyzer.load(root)
    try:
        rows = trace.con.execute(_HBM).fetchall()
    finally:
        trace.con.close()
    return {(run.rsplit("/", 1)[-1], counter): (device, n, round(total, 3)) for run, device, counter, n, total in rows}


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> Path:
    """The two-device comm_not_overlapped run in msprof's layout (one PROF folder) and torch_npu's (a rank each)."""
    root = tmp_path_factory.mktemp("counter_devices")
    for layout in ("msprof", "torch_npu"):
        write_export("comm_not_overlapped", root / layout, seed=SEED, layout=layout)
    return root


@pytest.mark.slow
def test_each_device_run_holds_its_own_devices_counters_as_its_rank_export(exports):
    (t,) = truth("comm_not_overlapped", seed=SEED)
    msprof, torch = _hbm(exports / "msprof"), _hbm(exports / "torch_npu")
    assert {k: v for k, v in _hbm(exports).items() if k[0].startswith("dev")} == msprof  # read with the ranks
    for device in t.device_ids():
        want = t.counters.filter(device_id=device)
        for counter in ("hbm_read", "hbm_write"):
            samples = want.filter(counter=counter)
            got_device, n, total = msprof[(f"dev{device}", counter)]
            assert (got_device, n) == (device, samples.height)
            assert total == pytest.approx(samples["value"].sum(), rel=1e-9)
            rank = next(v for (run, c), v in torch.items() if c == counter and f"rank{device}_" in run)
            assert (n, total) == rank[1:]  # the same samples as the rank's own export


@pytest.mark.slow
def test_a_track_whose_pid_names_no_device_of_the_run_stays_every_devices(exports, tmp_path):
    """The near miss: the device tracks' pids written 1,000 apart (not as the profilers write them) name devices
    the run has no task on; every device's run keeps all the samples, none lost in a run that does not exist."""
    import shutil

    root = tmp_path / "msprof"
    shutil.copytree(exports / "msprof", root)
    (timeline,) = root.glob("*/mindstudio_profiler_output/msprof_*.json")
    events = json.loads(timeline.read_text())
    pids = sorted({e["pid"] for e in events})
    moved = {pid: pid - (pid & 31) + 1000 * (pid & 31) + 3 for pid in pids}  # device d's tracks 1,000 d apart, + 3
    timeline.write_text(json.dumps([{**e, "pid": moved[e["pid"]]} for e in events]))
    shutil.copytree(exports / "torch_npu", tmp_path / "torch_npu")  # read together with the ranks, and alone
    (t,) = truth("comm_not_overlapped", seed=SEED)
    together = {k: v for k, v in _hbm(tmp_path).items() if k[0].startswith("dev")}
    assert together == _hbm(root)
    for device in t.device_ids():
        for counter in ("hbm_read", "hbm_write"):
            every = t.counters.filter(counter=counter)
            assert together[(f"dev{device}", counter)][:2] == (None, every.height)


def _verdict(out: Path) -> dict[str, tuple]:
    """Per report folder: its time parts and its findings (code, subject, impact)."""
    found = {}
    for path in sorted(out.rglob("diagnosis.json")):
        d = json.loads(path.read_text())
        parts = [(p["part"], p["us"]) for p in d["summary"]["breakdown"]["parts"]]
        found[path.parent.name] = (parts, [(f["code"], f["subject"], f["impact_us"]) for f in d["findings"]])
    return found


@pytest.mark.slow  # six diagnoses: the full suite, not the fast loop
@pytest.mark.parametrize("seed", [11, 12])
def test_each_device_of_a_multi_device_timeline_is_diagnosed_as_its_export_alone(tmp_path, seed):
    """Two devices waiting on their hosts, in one PROF folder: a device's gaps are explained by its own host's
    synchronizes, not the other's (seed 11 put one of device 1's in an unexplained gap of device 0)."""
    from analyzer.cli import main

    (t,) = truth("host_sync_low_util", seed=seed, devices=2)
    write_runs([t], tmp_path / "both", "msprof", "text", 1_000_000)
    assert main(["diagnose", str(tmp_path / "both"), "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    both = _verdict(tmp_path / "out")
    for device in t.device_ids():
        write_runs([t.for_device(device)], tmp_path / f"alone{device}", "msprof", "text", 1_000_000)
        out = tmp_path / f"out{device}"
        assert main(["diagnose", str(tmp_path / f"alone{device}"), "--out", str(out), "--format", "json"]) == 0
        (alone,) = _verdict(out).values()
        assert both[f"dev{device}"] == alone
