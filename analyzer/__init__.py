"""npu-triage: offline diagnosis of Huawei Ascend NPU profiling exports.

The library API (``analyzer/api/``; reference: ``docs/api.md``)::

    import analyzer
    trace = analyzer.load("fixtures/examples/resnet_host_sync")   # the normalized tables in DuckDB
    diagnosis = analyzer.diagnose(trace)                         # ranked findings of the run
    print(analyzer.findings_table(diagnosis))                    # as a polars DataFrame
    analyzer.report(diagnosis, "reports/", ["md", "html"], trace=trace)
"""

from analyzer import api
from analyzer.api import *  # noqa: F403 (the API is the package's public face)
from analyzer.version import __version__

__all__ = [*api.__all__, "__version__"]
