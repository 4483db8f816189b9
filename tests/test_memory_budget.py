"""DuckDB's memory budget (NPU_TRIAGE_MEMORY_LIMIT): lean (the default), fast, user-set, or none."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import duckdb
import pytest

from analyzer.cli import _run_command, main
from analyzer.ingest import load_export
from analyzer.ingest.memory_budget import (
    ENV,
    current_limit_bytes,
    duckdb_memory_limit,
    is_automatic,
    lift_automatic_limit,
    report_budget,
)

EXAMPLE = "fixtures/examples/resnet_host_sync"


@pytest.fixture(autouse=True)
def _restore_env(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)


def _limit_mib(con) -> float:
    return current_limit_bytes(con) / (1 << 20)


@pytest.mark.parametrize(
    ("setting", "expected", "unit_shift"),
    [
        ("130MiB", 130 << 20, 20),
        ("1GiB", 1 << 30, 30),
        ("2GB", 2 * 10**9, 30),
        ("900MB", 900 * 10**6, 20),
        ("3TiB", 3 << 40, 40),
    ],
)
def test_the_limit_in_force_is_read_back_in_bytes(setting, expected, unit_shift):
    """DuckDB shows its limit cut to one decimal of a binary unit ('1.8 GiB' for 2GB): read back
    to within that cut, never above."""
    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{setting}'")
    assert 0 <= expected - current_limit_bytes(con) < (1 << unit_shift) / 10


def test_duckdbs_own_default_limit_is_read_back_too():
    limit = current_limit_bytes(duckdb.connect())
    assert limit is not None and limit > 64 << 20


def _files(tmp_path, *sizes_mib: int) -> list:
    """Sparse files of the given sizes (no disk used)."""
    paths = []
    for n, size in enumerate(sizes_mib):
        path = tmp_path / f"f{n}"
        path.touch()
        os.truncate(path, size << 20)
        paths.append(path)
    return paths


@pytest.mark.parametrize("name", ["fast", "auto", "FAST"])  # auto: its name before lean was the default
def test_fast_budget_is_the_input_size_or_twice_the_largest_file_less_overhead_at_least_1_gib(
    monkeypatch, tmp_path, name
):
    monkeypatch.setenv(ENV, name)
    assert is_automatic()
    assert duckdb_memory_limit([]) == "1024MiB"
    assert duckdb_memory_limit(_files(tmp_path, 300)) == "1024MiB"
    assert duckdb_memory_limit(_files(tmp_path, 1000)) == f"{2 * 1000 - 256}MiB"
    # msprof slices: many files, none large; the tables are about as big as all of them together.
    assert duckdb_memory_limit(_files(tmp_path, 325, 300, 290, 150, 150, 100, 100)) == f"{325 + 300 + 290 + 500}MiB"
    assert duckdb_memory_limit([tmp_path / "missing"]) == "1024MiB"


def test_fast_budget_is_capped_at_a_share_of_the_machine(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, "fast")
    machine_mib = (os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")) >> 20
    huge = _files(tmp_path, machine_mib)  # sparse: as big as the machine's memory, on no disk
    assert duckdb_memory_limit(huge) == f"{max(1024, int((machine_mib << 20) * 0.4) >> 20)}MiB"


def test_user_settings_win(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, "3GB")
    assert duckdb_memory_limit(_files(tmp_path, 640)) == "3GB" and not is_automatic()
    monkeypatch.setenv(ENV, "none")
    assert duckdb_memory_limit(_files(tmp_path, 640)) is None


@pytest.mark.parametrize("name", [None, "lean", "Lean"])  # None: unset, the default
def test_lean_budget_is_under_twice_the_largest_file_less_the_overhead(monkeypatch, tmp_path, name):
    if name is not None:
        monkeypatch.setenv(ENV, name)
    assert is_automatic()
    # one big file: 1.9 x 300 - 96 - 300 / 32, well under fast's 1 GiB floor
    assert duckdb_memory_limit(_files(tmp_path, 300)) == f"{int(1.9 * 300 - 96 - 300 / 32)}MiB"
    # msprof slices: the largest file counts, and a share of them all (DuckDB's own allocations)
    slices = _files(tmp_path, 325, 300, 290, 150, 150, 100, 100)
    assert duckdb_memory_limit(slices) == f"{int(1.9 * 325 - 96 - 1415 / 32)}MiB"
    # never above fast (one huge file), never under the floor (a small export)
    assert duckdb_memory_limit(_files(tmp_path, 1000)) == f"{2 * 1000 - 256}MiB"
    assert duckdb_memory_limit(_files(tmp_path, 10)) == "64MiB"


def test_a_fast_run_gives_the_same_diagnosis_as_a_default_lean_run(monkeypatch, tmp_path):
    assert 60 <= _limit_mib(load_export(EXAMPLE).con) <= 64
    assert main(["diagnose", EXAMPLE, "--out", str(tmp_path / "lean"), "--format", "json"]) == 0
    monkeypatch.setenv(ENV, "fast")
    assert 1000 <= _limit_mib(load_export(EXAMPLE).con) <= 1024
    assert main(["diagnose", EXAMPLE, "--out", str(tmp_path / "fast"), "--format", "json"]) == 0
    lean, fast = (sorted((tmp_path / mode).rglob("diagnosis.json")) for mode in ("lean", "fast"))
    assert lean and [p.read_bytes() for p in lean] == [p.read_bytes() for p in fast]


def test_the_ingest_connection_gets_the_lean_budget_by_default():
    con = load_export(EXAMPLE).con
    assert 60 <= _limit_mib(con) <= 64


def test_a_user_limit_too_small_is_a_clear_message_not_a_traceback(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(ENV, "2MB")
    code = main(["diagnose", EXAMPLE, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert "out of memory" in err and ENV in err and "Traceback" not in err


def test_out_of_memory_under_the_default_lean_budget_runs_the_command_again_without_it(capsys):
    calls = []

    def command(args: argparse.Namespace) -> int:
        calls.append(os.environ.get(ENV))
        if len(calls) == 1:
            raise duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate data of size 16.0 MiB")
        return 0

    assert _run_command(argparse.Namespace(func=command)) == 0
    assert calls == [None, "none"]
    err = capsys.readouterr().err
    assert "running the command again" in err and f"{ENV}=lean" in err  # the default, named
    assert not lift_automatic_limit()  # lifted once: a second failure is reported, not retried


def test_out_of_memory_under_the_fast_budget_runs_the_command_again_without_it(monkeypatch, capsys):
    monkeypatch.setenv(ENV, "fast")
    calls = []

    def command(args: argparse.Namespace) -> int:
        calls.append(os.environ.get(ENV))
        if len(calls) == 1:
            raise duckdb.OutOfMemoryException("Out of Memory Error: could not allocate 256 KiB")
        return 0

    assert _run_command(argparse.Namespace(func=command)) == 0
    assert calls == ["fast", "none"]
    assert f"{ENV}=fast" in capsys.readouterr().err


def test_the_help_names_every_memory_setting(capsys):
    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert all(word in text for word in (ENV, "lean (default", "fast", "none", "8GB"))


def test_the_report_budget_lowers_the_lean_limit_while_the_html_is_drawn_and_restores_it(monkeypatch):
    con = duckdb.connect()
    con.execute("SET memory_limit = '400MiB'")
    with report_budget(con):  # lean, the default: a quarter
        assert _limit_mib(con) == 100
    assert _limit_mib(con) == 400
    con.execute("SET memory_limit = '100MiB'")
    with report_budget(con):  # never under 32 MiB
        assert _limit_mib(con) == 32
    assert _limit_mib(con) == 100
    for setting in ("fast", "3GB", "none"):  # the budgets a user chose for speed, or set, stay
        monkeypatch.setenv(ENV, setting)
        with report_budget(con):
            assert _limit_mib(con) == 100


def test_the_report_budget_is_restored_when_the_report_fails():
    con = duckdb.connect()
    con.execute("SET memory_limit = '400MiB'")
    with pytest.raises(ValueError), report_budget(con):
        raise ValueError("a chart failed")
    assert _limit_mib(con) == 400


def test_lean_and_fast_runs_write_the_same_html_report(monkeypatch, tmp_path):
    """The report is drawn under a lowered limit with lean: the page is the same bytes."""
    for mode in ("lean", "fast"):
        monkeypatch.setenv(ENV, mode)
        assert main(["diagnose", EXAMPLE, "--out", str(tmp_path / mode), "--format", "html"]) == 0
    lean, fast = (sorted((tmp_path / mode).rglob("report.html")) for mode in ("lean", "fast"))
    assert lean and [p.read_bytes() for p in lean] == [p.read_bytes() for p in fast]


def test_a_one_run_html_report_does_not_load_pyarrow(tmp_path):
    """pyarrow takes about 25 MiB of peak RSS as it loads, and a diagnose of one run needs it nowhere,
    the HTML report included (its chart rows are read as Python rows)."""
    code = (
        "import sys; from analyzer.cli import main; "
        f"rc = main(['diagnose', {EXAMPLE!r}, '--out', {str(tmp_path)!r}]); "
        "print(rc, 'pyarrow' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.split()[-2:] == ["0", "False"], proc.stderr[-2000:]
    assert list(tmp_path.rglob("report.html"))
