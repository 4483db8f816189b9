"""npu-triage: offline diagnosis of Huawei Ascend NPU profiling exports.

The library API (``analyzer/api/``; reference: ``docs/api.md``)::

    import analyzer
    trace = analyzer.load("fixtures/examples/resnet_host_sync")   # the normalized tables in DuckDB
    diagnosis = analyzer.diagnose(trace)                         # ranked findings of the run
    print(analyzer.findings_table(diagnosis))                    # as a polars DataFrame
    analyzer.report(diagnosis, "reports/", ["md", "html"], trace=trace)
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from analyzer import api
from analyzer.version import __version__

if TYPE_CHECKING:
    from analyzer.api import *  # noqa: F403 (the API is the package's public face)

__all__ = [*api.__all__, "__version__"]


class _Package(types.ModuleType):
    """This package, whose API names that also name a subpackage (analyzer/diff, analyzer/report) stay the API's:
    the import system's binding of the subpackage to its name is ignored. Nothing is imported before the name is
    used, so a batch worker, which imports this package first, never loads the report writers."""

    @property
    def diff(self) -> Any:
        return api.diff

    @diff.setter
    def diff(self, _subpackage: types.ModuleType) -> None:
        pass

    @property
    def report(self) -> Any:
        return api.report

    @report.setter
    def report(self, _subpackage: types.ModuleType) -> None:
        pass


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    """The API's names, each imported on first use (``analyzer/api/__init__.py``)."""
    if name in api.__all__:
        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
