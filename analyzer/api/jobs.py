"""One multi-rank job for a notebook: its tables, per-rank and per-link numbers, and its diagnosis."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.api.diagnosing import Params, diagnose_jobs
from analyzer.api.trace import Trace, load
from analyzer.diagnosis_model import Diagnosis
from analyzer.job.job_ingest import LoadedJob
from analyzer.job.metrics import link_metrics, rank_metrics
from analyzer.job.tables import JOB_TABLES
from analyzer.rule_engine.model import Rule

if TYPE_CHECKING:
    import polars as pl


@dataclass
class Job:
    """A job read from its rank exports: ``tables`` the job tables (``JOB_TABLES``), ``ranks`` and ``links``
    the per-rank and per-link means per step that the catalog keeps and a job diff compares, ``diagnose``
    its verdict. ``trace``: the Trace it lives in (its ranks with per-task data are runs there too)."""

    trace: Trace
    loaded: LoadedJob

    @property
    def job_id(self) -> str:
        return self.loaded.job.job_id

    def table(self, name: str) -> pl.DataFrame:
        """One job table, this job's rows (``job_ranks``, ``job_steps``, ``job_comm_ops``, ``job_links``, ...)."""
        if name not in JOB_TABLES:
            raise KeyError(f"no job table {name!r}; known: {', '.join(JOB_TABLES)}")
        return self.trace.con.sql(f"SELECT * FROM {name} WHERE run_id = $job", params={"job": self.job_id}).pl()

    def ranks(self) -> pl.DataFrame:
        """Per rank: its pipeline stage, its step-trace parts (stage, computing, communication not overlapped,
        free) and its collective wait and transit, in microseconds per step."""
        import polars

        return polars.DataFrame(rank_metrics(self.trace.con, self.job_id, self.job_id))

    def links(self) -> pl.DataFrame:
        """Per rank pair and transport: data moved and transit time per step, and the bandwidth in GB/s."""
        import polars

        return polars.DataFrame(link_metrics(self.trace.con, self.job_id, self.job_id))

    def diagnose(self, *, rule_set: list[Rule] | None = None, params: Params | None = None) -> Diagnosis:
        """The job's diagnosis (the job rules), as ``npu-triage diagnose`` writes it."""
        one = Trace(self.trace.con, self.trace.run_ids, self.trace.problems, self.trace.sources, [self.loaded])
        return diagnose_jobs(one, rule_set=rule_set, params=params)[0]

    def __repr__(self) -> str:
        job = self.loaded.job
        return f"Job({self.job_id!r}, world size {job.world_size}, {len(job.ranks)} rank export(s))"


def job(path: Path | str, job_id: str | None = None, *, memory_limit: str | None = None) -> Job:
    """The multi-rank job under ``path`` (``job_id``: which one, when the folder holds several), read with
    ``load``. ValueError when there is none, or several and no ``job_id``."""
    trace = load(path, memory_limit=memory_limit)
    ids = [j.job.job_id for j in trace.jobs]
    chosen = [j for j in trace.jobs if job_id in (None, j.job.job_id)]
    if len(chosen) != 1:
        trace.close()
        which = f"no job {job_id!r}" if job_id else f"{len(ids)} job(s), name one job_id"
        raise ValueError(f"{path}: {which}; its jobs: {', '.join(ids) or 'none'}")
    return Job(trace, chosen[0])
