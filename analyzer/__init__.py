"""npu-triage: offline diagnosis of Huawei Ascend NPU profiling exports.

The library API (``analyzer/api.py``)::

    import analyzer
    trace = analyzer.load("fixtures/examples/resnet_host_sync")   # the normalized tables in DuckDB
    diagnosis = analyzer.diagnose(trace)                         # ranked findings of the run
    print(analyzer.findings_table(diagnosis))                    # as an Arrow table
    analyzer.report(diagnosis, "reports/", ["md", "html"], trace=trace)
"""

from analyzer.api import (
    RuleSetError,
    Trace,
    diagnose,
    diagnose_all,
    findings_table,
    load,
    open_database,
    report,
    rules,
)
from analyzer.version import __version__

__all__ = [
    "RuleSetError",
    "Trace",
    "__version__",
    "diagnose",
    "diagnose_all",
    "findings_table",
    "load",
    "open_database",
    "report",
    "rules",
]
