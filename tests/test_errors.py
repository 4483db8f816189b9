"""One error base (analyzer/errors.py): every error meant for the user names its file and problem, carries its exit
code, survives a pickle, and the command line says it in one line; an error's first line is quoted safely."""

from __future__ import annotations

import importlib
import pickle
import pkgutil
import re
from pathlib import Path

import pytest

import analyzer
from analyzer.cli import _exit_code, main
from analyzer.errors import TriageError, first_line
from analyzer.ingest.model import IngestError
from analyzer.rule_engine.loader import RuleFileError
from analyzer.runs.work import RunTask, WorkSettings, analyze_run

ROOT = Path(__file__).resolve().parent.parent


def _error_classes() -> list[str]:
    """Every exception class defined in analyzer/, as written ('class X(Base):')."""
    found = []
    for path in sorted((ROOT / "analyzer").rglob("*.py")):
        found += re.findall(r"^class (\w+)\(([\w, .]+)\):", path.read_text(), re.M)
    return [f"{name}({bases})" for name, bases in found if re.search(r"Error|Exception", bases)]


def test_every_error_class_has_the_one_base():
    classes = _error_classes()
    assert len(classes) >= 19
    assert [c for c in classes if "TriageError" not in c and not c.startswith("TriageError(")] == []


def test_an_error_names_its_file_and_problem_and_survives_a_pickle():
    exc = IngestError("no Ascend profiling export found: looked for a: b", "/data/run: 1")
    assert str(exc) == "/data/run: 1: no Ascend profiling export found: looked for a: b"
    back = pickle.loads(pickle.dumps(exc))
    assert (type(back), back.file, back.problem, back.exit_code) == (IngestError, "/data/run: 1", exc.problem, 2)
    rule = pickle.loads(pickle.dumps(RuleFileError("rules/x/y.toml", "not valid TOML: a: b")))
    assert (rule.path, rule.problem, str(rule)) == (
        "rules/x/y.toml",
        "not valid TOML: a: b",
        "rules/x/y.toml: not valid TOML: a: b",
    )


def test_a_failed_run_keeps_its_whole_reason_even_with_colons(tmp_path):
    """The catalog's failure row holds the problem, not what follows the first ': ' of the message."""
    folder = tmp_path / "run: with a colon"
    folder.mkdir()
    (folder / "notes.txt").write_text("not an export")
    tables = analyze_run(RunTask(str(folder), "run", "fp"), WorkSettings())
    message = tables["failures"].column("message")[0].as_py()
    assert message.startswith("no Ascend profiling export found (looked for")


def _all_error_classes() -> list[type[TriageError]]:
    for module in pkgutil.walk_packages(analyzer.__path__, "analyzer."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    found, todo = [], [TriageError]
    while todo:
        found += (todo := [sub for cls in todo for sub in cls.__subclasses__()])
    return sorted(found, key=lambda c: c.__name__)


def test_the_command_line_catches_every_error_class_once(capsys):
    """Each of them, raised by any command, is one line on stderr and its exit code (none is an 'internal error')."""
    classes = _all_error_classes()
    assert len(classes) >= 19
    for cls in classes:
        exc = cls.__new__(cls)
        TriageError.__init__(exc, "a problem: with a colon", "some/file.csv")
        assert _exit_code(exc) == exc.exit_code == 2, cls
        assert capsys.readouterr().err == "npu-triage: some/file.csv: a problem: with a colon\n", cls

    class Lost(TriageError):
        exit_code = 3

    assert _exit_code(Lost("part of the input was lost")) == 3


def test_the_command_line_says_any_user_error_in_one_line_with_its_exit_code(tmp_path, capsys):
    bad = tmp_path / "rules" / "compute"
    bad.mkdir(parents=True)
    (bad / "broken.toml").write_text("[rule\nid = ")
    assert main(["rules", "list", "--rules", str(tmp_path / "rules")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("npu-triage: ") and "broken.toml" in err and "Traceback" not in err
    assert "internal error" not in err


@pytest.mark.parametrize(
    ("error", "limit", "expected"),
    [
        (ValueError(""), 300, "ValueError"),
        (ValueError("\nsecond"), 300, ""),
        (ValueError("x" * 400 + "\nmore"), 300, "x" * 300),
        (ValueError("x" * 400), None, "x" * 400),
        ("", 200, ""),
    ],
)
def test_first_line_is_safe_on_any_message(error, limit, expected):
    assert first_line(error, limit) == expected


def test_a_triage_error_without_a_file_is_its_problem():
    assert str(TriageError("--threads: 'x' is not a thread count")) == "--threads: 'x' is not a thread count"
