"""What a batch worker imports: no report writer; a module that is not installed is marked absent once."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from analyzer.runs import work


def test_a_module_not_installed_is_marked_absent(monkeypatch):
    name = "npu_triage_module_never_installed"
    monkeypatch.delitem(sys.modules, name, raising=False)
    work._absent_marked(name)
    assert name in sys.modules and sys.modules[name] is None
    with pytest.raises(ImportError):
        importlib.import_module(name)
    monkeypatch.delitem(sys.modules, name)


def test_an_installed_module_is_left_as_it_is():
    work._absent_marked("json")
    assert sys.modules["json"].dumps([1]) == "[1]"


_WORKER = """
import sys
import analyzer.runs.chunks  # what a batch worker unpickles its work from
print(sorted(m for m in sys.modules if m.startswith(("analyzer.report", "analyzer.api.")) or m == "polars"))
"""


@pytest.mark.slow
def test_a_batch_worker_loads_no_report_writer():
    # a worker is a fresh interpreter per batch: what it imports, each batch pays per core
    run = subprocess.run([sys.executable, "-c", _WORKER], capture_output=True, text=True, check=False, timeout=120)
    assert run.stdout.strip() == "[]", run.stderr
