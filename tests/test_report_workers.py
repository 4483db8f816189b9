"""A report pool's workers started before the reports are known (analyzer/api/report_pool.py ``start_workers``,
as `diagnose` starts them before it reads many exports): the reports they write are the ones written here, and
the workers end with the pool, used or not."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import analyzer
from analyzer.api import report_pool
from analyzer.api.report_pool import start_workers
from analyzer.api.reports import report_all, report_settings
from analyzer.report import runs_reader

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ["json", "md", "html"]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_few_reports_start_no_worker(monkeypatch):
    assert start_workers(report_pool.POOL_FROM - 1, FORMATS) is None
    monkeypatch.setattr(report_pool, "pool_size", lambda count: 0)  # one core: none either
    assert start_workers(10 * report_pool.POOL_FROM, FORMATS) is None


@pytest.mark.slow  # worker processes: the full suite runs it
def test_workers_started_before_reading_write_the_same_reports(tmp_path, monkeypatch):
    monkeypatch.setattr(report_pool, "POOL_FROM", 2)
    monkeypatch.setattr(report_pool, "TASK_PAGES", 2)
    monkeypatch.setattr(runs_reader, "CHUNK", 2)
    workers = start_workers(6, FORMATS)  # before the runs are read, as diagnose starts them
    assert workers is not None and workers.executor._max_workers >= 2
    trace = analyzer.load(ROOT / "fixtures" / "examples" / "batch_sweep")
    diagnoses = analyzer.diagnose_runs(trace)
    pooled = report_all(
        diagnoses, report_settings(tmp_path / "pool", FORMATS, trace, False), trace=trace, workers=workers
    )
    processes = list(workers.executor._processes or {})
    assert workers.executor._shutdown_thread and not processes  # shut down by report_all, its processes joined
    monkeypatch.setattr(report_pool, "POOL_FROM", 10**6)
    here = report_all(diagnoses, report_settings(tmp_path / "here", FORMATS, trace, False), trace=trace)
    assert [[p.relative_to(tmp_path / "pool") for p in paths] for _, paths in pooled] == [
        [p.relative_to(tmp_path / "here") for p in paths] for _, paths in here
    ]
    assert _files(tmp_path / "pool") == _files(tmp_path / "here")
    workers.close(stop=True)  # diagnose closes them again at its end: nothing left to do


@pytest.mark.slow  # worker processes: the full suite runs it
def test_unused_workers_end_when_closed(monkeypatch):
    monkeypatch.setattr(report_pool, "POOL_FROM", 2)
    workers = start_workers(6, ["json"])
    assert workers is not None
    started = list((workers.executor._processes or {}).values())
    assert started and all(p.is_alive() for p in started)
    workers.close(stop=True)  # nothing usable was read: diagnose ends them at once
    deadline = time.monotonic() + 10  # ended, not only asked to: a busy machine may still be tearing one down
    while any(_running(p) for p in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert {p.pid: _state(p.pid) for p in started if _running(p)} == {}


def _state(pid: int | None) -> str | None:
    """The process's state as the kernel tells it (None: no such process). Asked of the kernel, not of
    Process.is_alive: that says alive whenever its waitpid finds no child, as when another waiter in this test
    process has reaped it already."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def _running(process) -> bool:
    if not Path("/proc/self/stat").exists():  # no /proc: only the process object can tell
        return process.is_alive()
    return _state(process.pid) not in (None, "Z", "X")  # a zombie has ended; only its exit status is left to read
