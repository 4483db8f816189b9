"""`import analyzer` imports an API name's module only when the name is first used, and every name still
resolves to the object its module defines (diff and report too, though they also name subpackages)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import analyzer
from analyzer import api

ROOT = Path(__file__).resolve().parents[1]

# What a fresh interpreter holds after `import analyzer` and after the names `diagnose` uses.
_PROBE = """
import json, sys
import analyzer
at_import = sorted(sys.modules)
analyzer.load, analyzer.diagnose_runs, analyzer.rules, analyzer.Trace
import analyzer.diff.compare, analyzer.report.terminal
print(json.dumps({"at_import": at_import, "after_use": sorted(sys.modules),
                  "report": callable(analyzer.report) and not hasattr(analyzer.report, "__path__"),
                  "diff": callable(analyzer.diff) and not hasattr(analyzer.diff, "__path__")}))
"""


def _fresh() -> dict:
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_a_fresh_import_leaves_the_unused_api_modules_unimported():
    found = _fresh()
    for loaded in (found["at_import"], found["after_use"]):
        assert "analyzer.api.batches" not in loaded and "analyzer.runs.batch" not in loaded
        assert "analyzer.api.logs" not in loaded and "asyncio" not in loaded
    assert "analyzer.api.rule_sets" not in found["at_import"] and "analyzer.api.rule_sets" in found["after_use"]
    assert found["report"] and found["diff"], "a subpackage's import hid the API function of the same name"


def test_every_api_name_is_its_modules_object():
    for name in api.__all__:
        module = importlib.import_module(f"analyzer.api.{api._MODULES[name]}")
        assert getattr(analyzer, name) is getattr(module, name) is getattr(api, name), name
    assert set(api.__all__) == set(api._MODULES) and set(api.__all__) <= set(dir(analyzer))


def test_an_assigned_value_is_kept_but_the_subpackage_import_leaves_the_api_name(monkeypatch):
    import analyzer.report.terminal  # noqa: F401 (the import system binds the subpackage to analyzer.report)

    assert analyzer.report is api.report
    monkeypatch.setattr(analyzer, "report", print)
    assert analyzer.report is print
    monkeypatch.undo()
    assert analyzer.report is api.report and analyzer.diff is api.diff
