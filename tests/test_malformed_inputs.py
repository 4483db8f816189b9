"""The malformed corpus through the whole CLI: `ingest` and `diagnose` once per class of fault, `batch`
for every archive (each case is read at the reader in test_malformed_readers.py).

A clear message per problem, a diagnosis of what is usable, exit 2 only when nothing is, exit 3
from ingest and diagnose exactly when part of a usable input was lost, never a traceback, inputs
byte-identical after every command.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.execution import threads
from analyzer.ingest import load_export
from tests.malformed import base_exports as base
from tests.malformed.cases import CASES, HOSTILE, LOCKED_DB, Case, by_name, no_escape_happened
from tests.tree_hash import tree_digest

TRACEBACK = "Traceback (most recent call last)"
PROBLEM_LINE = re.compile(r"^(error|warning|info): (?P<where>.+?): (?P<what>.+)$")
CASE_BY_NAME = by_name()
# One per reader family in a real process (the folder with no export and the hostile names have their own
# subprocess and in-process tests).
SUBPROCESS_CASES = (
    "kd_binary_garbage_alone",
    "tv_truncated_mid_json",
    "sqlite_corrupt_pages",
    "zip_entry_dot_dot",
)


@pytest.fixture(autouse=True)
def _threads_as_a_user_has_them(monkeypatch):
    """Every command here, in this process or started from it, as a user's runs: without the thread count the
    suite's workers share the cores by (conftest.py), so that an input is sized first (threads.py) as it is then."""
    monkeypatch.delenv(threads.ENV, raising=False)


def _build(case: Case, tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    return case.build(folder)


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _formats(case: Case) -> str:
    """HTML (the slow renderer) only where op names could inject markup; JSON everywhere."""
    return "json,html" if "hostile" in case.name else "json"


def _commands(case: Case, path: Path, tmp_path: Path) -> list[list[str]]:
    if case.command == "batch":
        return [["batch", str(path), "--catalog", str(tmp_path / "catalog.duckdb"), "--jobs", "1"]]
    return [
        ["ingest", str(path), "--db", str(tmp_path / "runs.duckdb")],
        ["diagnose", str(path), "--out", str(tmp_path / "out"), "--format", _formats(case)],
    ]


def _assert_clear_messages(case: Case, code: int, out: str, err: str) -> None:
    text = out + err
    assert TRACEBACK not in text and "internal error" not in text, text
    problems = [line for line in err.splitlines() if PROBLEM_LINE.match(line)]
    assert len(problems) == len(set(problems)), f"a problem is reported twice:\n{err}"
    if case.expect == "clean":
        assert code in (0, 1), text
        assert not [p for p in problems if not p.startswith("info:")], err
        return
    assert (code == 2) == (case.expect == "unusable"), f"exit {code} for an {case.expect} case:\n{text}"
    lost = any(p.startswith("error:") for p in problems)
    if code == 3:
        assert lost, f"exit 3 without an error-severity problem:\n{err}"
    if case.command != "batch" and case.expect == "usable":  # ingest and diagnose alike
        assert (code == 3) == lost, f"exit {code}, error-severity problem: {lost}:\n{err}"
    if case.expect == "unusable":
        assert "npu-triage:" in err, err  # the closing one-line verdict says nothing usable was found
        if "nothing usable was found" in err:  # it points at problems above only when some were printed
            assert ("(problems above)" in err) == bool(problems), err
    if case.file and case.command != "batch":
        named = [p for p in problems if case.file in PROBLEM_LINE.match(p)["where"]]
        assert named, f"no message names {case.file}:\n{err}"
        if case.where:
            assert any(re.search(case.where, PROBLEM_LINE.match(p)["where"]) for p in named), (
                f"no message on {case.file} says where ({case.where}):\n{err}"
            )
    elif case.file:
        assert case.file in text, f"no message names {case.file}:\n{text}"


def _assert_diagnosis_says_what_was_unusable(case: Case, tmp_path: Path) -> None:
    reports = sorted((tmp_path / "out").rglob("diagnosis.json"))
    assert reports, "a partial export still gets a diagnosis"
    for report in reports:
        d = json.loads(report.read_text())
        assert d["completeness"], "the completeness table lists every rule's outcome"
        if case.expect == "usable" and case.file:
            assert any(case.file in p["file"] for p in d["ingest_problems"]), (
                f"the diagnosis does not record the problem on {case.file}"
            )
        html = report.with_name("report.html")
        if html.exists():
            page = html.read_text()
            assert "<script>alert(" not in page and "<img src=x>" not in page, "op names must be escaped in HTML"


def _has_diagnose() -> bool:
    from analyzer.cli import commands

    return "diagnose" in commands.COMMANDS


def _cli_cases() -> list[Case]:
    """The whole CLI once per class of fault (its first case; every case is read at the reader in
    test_malformed_readers.py), every archive case (only batch reads archives), and the hostile op
    names (the HTML report must escape them)."""
    chosen, seen = [], set()
    for c in CASES:
        if c.command == "batch" or c.name == "kd_hostile_op_names" or c.fault_class not in seen:
            chosen.append(c)
            seen.add(c.fault_class)
    return chosen


CLI_CASES = _cli_cases()


@pytest.mark.slow
@pytest.mark.parametrize("case", CLI_CASES, ids=[c.name for c in CLI_CASES])
def test_malformed_input_gives_clear_messages_and_leaves_input_identical(case: Case, tmp_path, capsys):
    path = _build(case, tmp_path)
    before = tree_digest(tmp_path / "in")
    for argv in _commands(case, path, tmp_path):
        if argv[0] == "diagnose" and not _has_diagnose():
            continue
        code, out, err = _run(argv, capsys)
        _assert_clear_messages(case, code, out, err)
        assert tree_digest(tmp_path / "in") == before, f"`{argv[0]}` changed the input tree"
        if argv[0] == "diagnose" and case.expect != "unusable":
            _assert_diagnosis_says_what_was_unusable(case, tmp_path)
    assert not no_escape_happened(tmp_path / "in")


def test_corpus_has_at_least_120_cases_and_the_cli_runs_once_per_class():
    assert len(CASE_BY_NAME) >= 120
    classes = {c.fault_class for c in CASES if c.command != "batch"}
    assert len([c for c in CLI_CASES if c.command != "batch"]) <= len(classes) + 1


@pytest.mark.parametrize(
    "name",
    [
        "kd_utf8_bom",
        "kd_unsorted_rows",
        "kd_overlapping_tasks",
        "kd_hostile_op_names",
        "kd_unknown_columns",
        "tv_utf8_bom",
    ],
)
def test_malformed_clean_case_reads_every_task(name, tmp_path):
    path = _build(CASE_BY_NAME[name], tmp_path)
    ingested = load_export(path)
    assert ingested.con.execute("SELECT sum(task_count) FROM runs").fetchone()[0] == len(base.OPS)


def test_malformed_hostile_op_names_round_trip_exactly(tmp_path):
    ingested = load_export(_build(CASE_BY_NAME["kd_hostile_op_names"], tmp_path))
    names = {r[0] for r in ingested.con.execute("SELECT op_name FROM ops").fetchall()}
    assert set(HOSTILE) <= names


def test_malformed_timestamps_in_ns_are_reported_as_wrong_unit(tmp_path):
    ingested = load_export(_build(CASE_BY_NAME["kd_timestamps_in_ns"], tmp_path))
    lines = [p.line() for p in ingested.problems]
    assert any("kernel_details.csv" in line and "nanoseconds" in line for line in lines), lines


def test_malformed_locked_sqlite_is_read_without_waiting_or_writing(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    db = base.write_torch_db(folder)
    assert (folder / LOCKED_DB) == db
    holder = sqlite3.connect(db, isolation_level=None, timeout=0)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        before = tree_digest(folder)
        code, out, err = _run(["ingest", str(folder)], capsys)
        assert TRACEBACK not in out + err
        assert code == 0 or "ascend_pytorch_profiler_0.db" in err
        assert tree_digest(folder) == before
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", SUBPROCESS_CASES)
def test_malformed_input_subprocess_never_prints_a_traceback(name, tmp_path):
    case = CASE_BY_NAME[name]
    path = _build(case, tmp_path)
    before = tree_digest(tmp_path / "in")
    for argv in _commands(case, path, tmp_path):
        if argv[0] == "diagnose" and not _has_diagnose():
            continue
        proc = subprocess.run(
            [sys.executable, "-m", "analyzer", *argv],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert TRACEBACK not in proc.stdout + proc.stderr, proc.stderr
        assert (proc.returncode == 2) == (case.expect == "unusable"), proc.stderr
        assert tree_digest(tmp_path / "in") == before


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("empty_folder", "no Ascend profiling export found"),
        ("unrelated_files", "no Ascend profiling export found"),
        ("export_truncated_early", "nothing usable was found"),
    ],
)
def test_new_user_diagnose_on_unusable_folder_exits_2_with_one_clear_message(name, message, tmp_path):
    path = _build(CASE_BY_NAME[name], tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "analyzer", "diagnose", str(path), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 2 and message in proc.stderr and TRACEBACK not in proc.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("diagnosis.*"))


@pytest.mark.parametrize("option", ["--db", "--parquet"])
def test_ingest_output_inside_the_export_is_refused_and_nothing_written(option, tmp_path, capsys):
    export = base.write_torch_text(tmp_path)
    before = tree_digest(tmp_path)
    code, _, err = _run(["ingest", str(export), option, str(export / "ASCEND_PROFILER_OUTPUT" / "x.duckdb")], capsys)
    assert code == 2 and "inside the export folder" in err
    assert tree_digest(tmp_path) == before


@pytest.mark.slow
def test_new_user_diagnose_on_export_truncated_late_exits_3_naming_what_was_lost(tmp_path):
    path = _build(CASE_BY_NAME["export_truncated_late"], tmp_path)
    before = tree_digest(path)
    proc = subprocess.run(
        [sys.executable, "-m", "analyzer", "diagnose", str(path), "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 3, proc.stderr
    assert "part of the input was lost" in proc.stderr and TRACEBACK not in proc.stderr
    assert list((tmp_path / "out").rglob("diagnosis.json")), "a partial export still gets a diagnosis"
    assert tree_digest(path) == before
    again = subprocess.run(
        [sys.executable, "-m", "analyzer", "diagnose", str(path), "--out", str(tmp_path / "out2"), "--allow-partial"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
