"""A batch worker marks a module that is not installed absent once, so that pyarrow's tries do not search for it."""

from __future__ import annotations

import importlib
import sys

import pytest

from analyzer.runs import executor


def test_a_module_not_installed_is_marked_absent(monkeypatch):
    name = "npu_triage_module_never_installed"
    monkeypatch.delitem(sys.modules, name, raising=False)
    executor._absent_marked(name)
    assert name in sys.modules and sys.modules[name] is None
    with pytest.raises(ImportError):
        importlib.import_module(name)
    monkeypatch.delitem(sys.modules, name)


def test_an_installed_module_is_left_as_it_is():
    executor._absent_marked("json")
    assert sys.modules["json"].dumps([1]) == "[1]"
