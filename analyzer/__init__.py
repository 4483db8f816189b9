"""npu-triage: offline diagnosis of Huawei Ascend NPU profiling exports.

The library API (``analyzer/api/``; reference: ``docs/api.md``)::

    import analyzer
    trace = analyzer.load("fixtures/examples/resnet_host_sync")   # the normalized tables in DuckDB
    diagnosis = analyzer.diagnose(trace)                         # ranked findings of the run
    print(analyzer.findings_table(diagnosis))                    # as a polars DataFrame
    analyzer.report(diagnosis, "reports/", ["md", "html"], trace=trace)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analyzer import api

# API names that also name a subpackage (analyzer/diff, analyzer/report): bound now, after the
# subpackage is imported, or importing it later would set the name to the subpackage.
from analyzer.api import diff as diff
from analyzer.api import report as report
from analyzer.version import __version__

if TYPE_CHECKING:
    from analyzer.api import *  # noqa: F403 (the API is the package's public face)

__all__ = [*api.__all__, "__version__"]


def __getattr__(name: str) -> Any:
    """The API's names, each imported on first use (``analyzer/api/__init__.py``)."""
    if name in api.__all__:
        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
