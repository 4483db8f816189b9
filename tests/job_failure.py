"""A job whose analysis fails, for the tests of what a batch does then.

No input is known to make a job's analysis fail (a rank number too large for an INTEGER in a folder name did; it
names no rank now), so the failure is put into the function that computes a job's catalog rows: in this process
(``failing``, with monkeypatch) or on a Dask cluster's workers (``install`` and ``uninstall``, by Client.run).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FAILING_JOB = "job_slow_rank"  # the id of the job that fails: its folder's name
MESSAGE = "the test's failure of this job's analysis"


def failing(job_tables: Callable[..., Any]) -> Callable[..., Any]:
    """``job_tables`` (analyzer.runs.job_catalog) failing for the job FAILING_JOB, as itself for any other."""

    def job_tables_but_one(job: Any, *args: Any, **kwargs: Any) -> Any:
        if job.job_id == FAILING_JOB:
            raise RuntimeError(MESSAGE)
        return job_tables(job, *args, **kwargs)

    job_tables_but_one.real = job_tables  # type: ignore[attr-defined]
    return job_tables_but_one


def install() -> None:
    """In a worker process: its job analysis fails for FAILING_JOB."""
    from analyzer.runs import job_catalog

    job_catalog.job_tables = failing(getattr(job_catalog.job_tables, "real", job_catalog.job_tables))


def uninstall() -> None:
    """In a worker process: its job analysis as it was."""
    from analyzer.runs import job_catalog

    job_catalog.job_tables = getattr(job_catalog.job_tables, "real", job_catalog.job_tables)
