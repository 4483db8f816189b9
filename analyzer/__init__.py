"""npu-triage: offline diagnosis of Huawei Ascend NPU profiling exports.

The library API (``analyzer/api/``; reference: ``docs/api.md``)::

    import analyzer
    trace = analyzer.load("fixtures/examples/resnet_host_sync")   # the normalized tables in DuckDB
    diagnosis = analyzer.diagnose(trace)                         # ranked findings of the run
    print(analyzer.findings_table(diagnosis))                    # as a polars DataFrame
    analyzer.report(diagnosis, "reports/", ["md", "html"], trace=trace)
"""

from analyzer.api import (
    Diff,
    DifferentModels,
    RuleSetError,
    Trace,
    batch,
    diagnose,
    diagnose_all,
    diagnose_jobs,
    diagnose_runs,
    diff,
    findings_table,
    load,
    open_database,
    report,
    rules,
    write_index,
)
from analyzer.version import __version__

__all__ = [
    "Diff",
    "DifferentModels",
    "RuleSetError",
    "Trace",
    "__version__",
    "batch",
    "diagnose",
    "diagnose_all",
    "diagnose_jobs",
    "diagnose_runs",
    "diff",
    "findings_table",
    "load",
    "open_database",
    "report",
    "rules",
    "write_index",
]
