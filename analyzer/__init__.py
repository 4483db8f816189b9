"""npu-triage: offline diagnosis of Huawei Ascend NPU profiling exports.

The library API (``analyzer/api.py``)::

    import analyzer
    trace = analyzer.load("fixtures/examples/resnet_host_sync")   # the normalized tables in DuckDB
    diagnosis = analyzer.diagnose(trace)                         # ranked findings of the run
    print(analyzer.findings_table(diagnosis))                    # as an Arrow table
    analyzer.report(diagnosis, "reports/", ["md", "html"], trace=trace)
"""

__version__ = "0.1.0"

from analyzer.api import (  # noqa: E402  (after __version__, which the modules imported here read)
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
