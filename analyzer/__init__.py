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


def _api_name(name: str) -> property:
    """The API's ``name``, unless a value was assigned to it; the import system's binding of the subpackage of
    that name (``analyzer.<name>``) is ignored, so the name stays the API's once the subpackage is imported."""
    subpackage = f"{__name__}.{name}"

    def getter(module: types.ModuleType) -> Any:
        assigned = vars(module).get(name, _UNSET)
        return getattr(api, name) if assigned is _UNSET else assigned

    def setter(module: types.ModuleType, value: Any) -> None:
        if value is not sys.modules.get(subpackage):
            vars(module)[name] = value

    return property(getter, setter)


_UNSET = object()


class _Package(types.ModuleType):
    """This package, whose API names that also name a subpackage (analyzer/diff, analyzer/report) stay the API's.
    Nothing is imported before the name is used, so a batch worker, which imports this package first, never
    loads the report writers."""

    diff = _api_name("diff")
    report = _api_name("report")


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    """The API's names, each imported on first use (``analyzer/api/__init__.py``)."""
    if name in api.__all__:
        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
