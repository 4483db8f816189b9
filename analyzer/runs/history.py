"""What a catalog holds already about a batch's inputs: the input its runs and jobs lost, the failures of their
content, and the inputs that are identical copies of another (the catalog table ``copies``).

A rerun reads these instead of analysing again, so that it reports the same state as the batch that found it.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from analyzer.ingest.database import all_or_nothing, insert_tables
from analyzer.ingest.sql_values import in_list
from analyzer.runs.work import INFRASTRUCTURE

# The error problems of the catalogued runs (jobs) of some fingerprints: the input they lost.
_LOST_SQL = {
    "run_problems": "SELECT r.fingerprint, p.file, p.problem FROM catalog_runs r JOIN run_problems p USING (run_id) "
    f"WHERE p.severity = 'error' AND {in_list('r.fingerprint')}",
    "job_problems": "SELECT j.fingerprint, p.file, p.problem FROM catalog_jobs j JOIN job_problems p USING (job_id) "
    f"WHERE p.severity = 'error' AND {in_list('j.fingerprint')}",
}


def lost_lines(problems: list[dict]) -> list[str]:
    """What a run or a job lost, from its problems: its 'error' ones, as 'file: problem', sorted, once each.

    >>> lost_lines([{"severity": "error", "file": "", "problem": "p"}, {"severity": "warning", "file": "f"}])
    ['(export): p']
    """
    return sorted({f"{r['file'] or '(export)'}: {r['problem']}" for r in problems if r["severity"] == "error"})


def earlier_losses(con: duckdb.DuckDBPyConnection, fingerprints: list[str], table: str) -> dict[str, list[str]]:
    """Per fingerprint among ``fingerprints``, what its catalogued runs (``table`` 'run_problems') or job
    ('job_problems') lost; fingerprints that lost nothing are absent."""
    by_print: dict[str, list[dict]] = {}
    for fingerprint, file, problem in con.execute(_LOST_SQL[table], [fingerprints]).fetchall():
        by_print.setdefault(fingerprint, []).append({"severity": "error", "file": file, "problem": problem})
    return {fingerprint: lost_lines(rows) for fingerprint, rows in by_print.items()}


def earlier_failures(con: duckdb.DuckDBPyConnection, fingerprints: list[str]) -> dict[str, str]:
    """Per fingerprint among ``fingerprints`` that an earlier batch could not use, its failure's message."""
    rows = con.execute(
        f"SELECT fingerprint, min(message) FROM failures WHERE {in_list('fingerprint')} "
        "AND NOT starts_with(message, ?) GROUP BY fingerprint",
        [fingerprints, INFRASTRUCTURE],
    ).fetchall()
    return dict(rows)


def record_copies(con: duckdb.DuckDBPyConnection, copies: list[tuple[str, str, str]]) -> None:
    """Write the (path, fingerprint, copy_of) rows of a batch's copies in one transaction, replacing the rows
    of the same path and fingerprint."""
    if not copies:
        return
    table = pa.table({name: [c[i] for c in copies] for i, name in enumerate(("path", "fingerprint", "copy_of"))})
    with all_or_nothing(con):
        con.register("_copies", table)
        con.execute("DELETE FROM copies WHERE (path, fingerprint) IN (SELECT (path, fingerprint) FROM _copies)")
        con.unregister("_copies")
        insert_tables(con, {"copies": table})
