"""The README's promise, checked literally: npu-triage never writes inside an export it reads, never
touches the network, and never leaves processes behind (the stops are in ``test_hard_stops.py``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from analyzer.cli import main
from tests.test_hard_stops import _live_group, _wait_for
from tests.tree_hash import tree_digest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "fixtures" / "examples" / "resnet_host_sync"
ACCURACY_EXAMPLE = ROOT / "fixtures" / "examples" / "accuracy_tile_fault"
PROMISE = (
    "npu-triage never writes inside an export it reads, never touches the network, and never leaves\nprocesses behind"
)


def _cli(argv: list[str], cwd: Path, prefix: list[str] = (), env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "analyzer", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def _copy_exports(tree: Path) -> Path:
    """Two exports (copies of the bundled example) under ``tree``, and an archive of one of them."""
    shutil.copytree(EXAMPLE, tree / "a")
    shutil.copytree(EXAMPLE, tree / "b")
    (tree / "b" / "README.md").unlink(missing_ok=True)
    shutil.make_archive(str(tree / "c"), "zip", tree / "a")
    shutil.copytree(ACCURACY_EXAMPLE, tree / "acc")  # a dump set: no profile command takes it for an export
    return tree


@pytest.fixture
def exports(tmp_path) -> Path:
    return _copy_exports(tmp_path / "in")


def _every_command(tree: Path, out: Path) -> list[list[str]]:
    a = next(p for p in (tree / "a").iterdir() if p.is_dir())
    b = next(p for p in (tree / "b").iterdir() if p.is_dir())
    return [
        ["ingest", str(tree), "--db", str(out / "runs.duckdb"), "--parquet", str(out / "pq")],
        ["diagnose", str(tree), "--out", str(out / "reports")],
        ["diagnose", "--db", str(out / "runs.duckdb"), "--out", str(out / "from_db")],
        ["batch", str(tree), "--catalog", str(out / "cat.duckdb"), "--jobs", "2"],
        ["query", str(out / "cat.duckdb"), "SELECT count(*) FROM catalog_runs"],
        ["export", str(out / "cat.duckdb"), "--parquet", str(out / "cat_pq")],
        ["diff", str(a), str(b), "--html", str(out / "d.html"), "--json", str(out / "d.json")],
        ["sweep", f"{a}:bs=8", f"{b}:bs=16", "--html", str(out / "s.html")],
        [
            "accuracy", str(tree / "acc" / "dump" / "native"), str(tree / "acc" / "reference" / "npy"),
            "--profile", str(a), "--out", str(out / "acc"), "--catalog", str(out / "acc.duckdb"),
        ],
    ]  # fmt: skip


def test_readme_states_the_promise():
    text = " ".join((ROOT / "README.md").read_text().split())  # the README may wrap the sentence anywhere
    assert " ".join(PROMISE.split()) in text


def _strace(log: Path) -> list[str]:
    """strace of the command and every process it starts; with seccomp-bpf only the traced calls stop a
    process, so the command runs as fast as untraced (plain ptrace stops it at every call it makes)."""
    return ["strace", "-f", "--seccomp-bpf", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o", str(log)]


def _network_calls(log: Path) -> list[str]:
    """connect/sendto/sendmsg calls to an Internet address in an strace log."""
    calls = re.compile(r"\b(connect|sendto|sendmsg)\(.*(AF_INET6?|sin6?_addr|inet_addr)")
    return [line for line in log.read_text().splitlines() if calls.search(line)]


@dataclass(frozen=True)
class CommandRun:
    """One command over the exports: its result, the exports' digest after it, and its calls to an
    Internet address (None when it could not be traced)."""

    argv: list[str]
    proc: subprocess.CompletedProcess
    digest: str
    network: list[str] | None


@pytest.fixture(scope="module")
def every_command_run(tmp_path_factory) -> tuple[Path, str, list[CommandRun]]:
    """Every command once, in order, over fresh exports, each under strace when it can trace: both
    promises are checked on the same runs (a second pass would only start the program again)."""
    tmp = tmp_path_factory.mktemp("never_does")
    tree = _copy_exports(tmp / "in")
    before = tree_digest(tree)
    traced = bool(shutil.which("strace"))
    runs = []
    for i, argv in enumerate(_every_command(tree, tmp / "out")):
        log = tmp / f"strace{i}.log"
        prefix = _strace(log) if traced else []
        proc = _cli(argv, cwd=tmp, prefix=prefix)
        if traced and "ptrace" in proc.stderr and "Operation not permitted" in proc.stderr:
            traced = False  # tracing is not permitted here: run this command again without it
            proc = _cli(argv, cwd=tmp)
        runs.append(CommandRun(argv, proc, tree_digest(tree), _network_calls(log) if traced else None))
    return tree, before, runs


@pytest.mark.slow
def test_never_writes_inside_an_export(every_command_run, monkeypatch, capsys):
    exports, before, runs = every_command_run
    tmp_path = exports.parent
    for run in runs:
        assert run.proc.returncode in (0, 1, 3), f"{run.argv[0]}: {run.proc.stderr}"
        assert run.digest == before, f"`{run.argv[0]}` wrote inside the exports"
    export = next(p for p in (exports / "a").iterdir() if p.is_dir())
    inside = [
        (["diagnose", "ASCEND_PROFILER_OUTPUT"], export),  # the default reports/ would land in the export
        (["diagnose", str(export), "--out", str(export / "r")], tmp_path),
        (["ingest", str(export / "ASCEND_PROFILER_OUTPUT"), "--db", str(export / "x.duckdb")], tmp_path),
        (["batch", str(exports), "--catalog", str(export / "c.duckdb")], tmp_path),
    ]
    for argv, cwd in inside:  # refused before any work, so in this process (no program start to pay for)
        monkeypatch.chdir(cwd)
        code, err = main(argv), capsys.readouterr().err
        assert code == 2 and "inside the export folder" in err, err
        assert tree_digest(exports) == before, f"`{' '.join(argv)}` wrote inside the export"


@pytest.mark.slow
def test_never_touches_the_network(every_command_run):
    exports, _, runs = every_command_run
    tmp_path = exports.parent
    if not shutil.which("strace"):
        pytest.skip("strace is not installed")
    if any(run.network is None for run in runs):
        pytest.skip("tracing is not permitted here")
    for run in runs:
        assert "Traceback" not in run.proc.stderr, run.proc.stderr
        assert not run.network, f"`{run.argv[0]}` reached for the network: {run.network[:3]}"
    out = tmp_path / "out"
    (tmp_path / "sq.db").write_bytes(b"SQLite format 3\x00" + bytes(4080))  # what DuckDB would need an extension for
    commands = [
        ["batch", str(exports), "--catalog", str(tmp_path / "sq.db")],
        ["query", str(out / "cat.duckdb"), "SELECT * FROM read_csv('https://example.com/x.csv')"],
        ["query", str(out / "cat.duckdb"), "INSTALL httpfs"],
    ]
    for i, argv in enumerate(commands):
        log = tmp_path / f"strace-more{i}.log"
        proc = _cli(argv, cwd=tmp_path, prefix=_strace(log))
        assert "Traceback" not in proc.stderr, proc.stderr
        assert not _network_calls(log), f"`{argv[0]}` reached for the network: {_network_calls(log)[:3]}"


@pytest.mark.slow
def test_never_leaves_processes_behind(exports, tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "analyzer",
            "batch",
            str(exports),
            "--catalog",
            str(tmp_path / "c.duckdb"),
            "--jobs",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(scratch)},
        start_new_session=True,
    )
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    # the resource tracker ends by itself as soon as its batch is gone (the end of a pipe), not before
    _wait_for(lambda: not _live_group(proc.pid), 5, f"the batch's processes end: {_live_group(proc.pid)}")
    left = [p.name for p in scratch.iterdir() if p.name.startswith(("npu-triage-", "pymp-"))]
    assert not left, f"temporary folders left: {left}"
