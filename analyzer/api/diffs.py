"""Compare two runs (export folders or CATALOG.duckdb:RUN_ID) or two job folders: ``npu-triage diff``'s numbers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import analyzer.diff  # noqa: F401 (the subpackage loads before `import analyzer` binds diff, see there)
from analyzer.errors import TriageError

if TYPE_CHECKING:
    import polars as pl

    from analyzer.diff.model import RunDiff
    from analyzer.job.job_diff import JobDiff


class DifferentModels(TriageError, ValueError):
    """Two runs of different models, compared without ``force``: a diff would say nothing about either."""

    def __init__(self, base: str, new: str, difference: str, notes: list[str]) -> None:
        super().__init__(
            f"refusing to compare {base} with {new}: they are different models: {difference}. "
            "A diff of two models says nothing about either; add --force to compare them anyway"
        )
        self.notes = notes  # what loading the two sides said (catalog runs, reruns)


@dataclass(frozen=True)
class Diff:
    """Base against new. ``run``: the diff of two runs (step time, per operator type and position, with the
    noise of each); ``job``: that of two job folders (step time, per rank and link); one of them is None.
    ``different_models``: what differs when two models were compared with ``force`` ('' otherwise)."""

    run: RunDiff | None = None
    job: JobDiff | None = None
    different_models: str = ""

    def types(self) -> pl.DataFrame:
        """Per operator type: status ('slower', 'faster', 'unchanged', 'within noise', ...), the change of its
        median per-step time with its 95% interval and p value, and the launches of each side."""
        import polars

        rows = [
            {**{k: v for k, v in asdict(t).items() if k != "shift"}, **asdict(t.shift)} for t in self.run_diff.types
        ]
        return polars.DataFrame(rows, infer_schema_length=None)

    def ranks(self) -> pl.DataFrame:
        """Two jobs: the ranks whose stage time changed most (new minus base)."""
        import polars

        return polars.DataFrame(self.job_diff.ranks, infer_schema_length=None)

    def links(self) -> pl.DataFrame:
        """Two jobs: the links whose bandwidth changed most."""
        import polars

        return polars.DataFrame(self.job_diff.links, infer_schema_length=None)

    def to_dict(self, fail_pct: float | None = None) -> dict[str, Any]:
        """The ``diff --json`` document (with ``fail_pct``: the regressions beyond it too)."""
        from analyzer.report.diff_json import diff_to_dict
        from analyzer.report.job_diff_text import job_diff_dict

        return job_diff_dict(self.job) if self.job is not None else diff_to_dict(self.run_diff, fail_pct)

    def regressions(self, pct: float) -> list[str]:
        """What slowed by more than ``pct`` percent beyond noise: the step, op types (two jobs: the job step)."""
        if self.job is not None:
            delta = self.job.step_delta_pct
            return [f"job step time +{delta:.1f}%"] if delta is not None and delta > pct else []
        return self.run_diff.regressions(pct)

    @property
    def run_diff(self) -> RunDiff:
        """``run``, for a diff of two runs (ValueError for two jobs)."""
        if self.run is None:
            raise ValueError("a diff of two jobs has no operator types: see ranks() and links()")
        return self.run

    @property
    def job_diff(self) -> JobDiff:
        """``job``, for a diff of two jobs (ValueError for two runs)."""
        if self.job is None:
            raise ValueError("a diff of two runs has no ranks or links: see types()")
        return self.job

    def __repr__(self) -> str:
        from analyzer.report.notebook import diff_repr

        return diff_repr(self)

    def _repr_html_(self) -> str:
        from analyzer.report.notebook import diff_html

        return diff_html(self)


def diff(before: Path | str, after: Path | str, *, rules_dir: Path | str | None = None, force: bool = False) -> Diff:
    """``npu-triage diff BEFORE AFTER``: two export folders or catalog runs (``CATALOG.duckdb:RUN_ID``), or two
    job folders. Export folders are diagnosed (``rules_dir``: default the built-in rules) to list the findings
    that came and went. Raises DifferentModels for two different models unless ``force``, which then puts
    the warning first in the diff's notes."""
    # The diff engine (numpy, pyarrow, the catalog) loads here: `import analyzer` binds this function, and
    # every other command would pay for it.
    from analyzer.diff.compare import diff_runs
    from analyzer.job.job_diff import diff_jobs, read_side, the_job
    from analyzer.metrics.model_identity import load_identities, model_difference
    from analyzer.runs.sources import load_side, memory_catalog
    from analyzer.runs.work import WorkSettings

    jobs = [the_job(Path(p)) for p in (before, after)]
    if jobs[0] and jobs[1]:
        return Diff(job=diff_jobs(read_side(jobs[0], str(before)), read_side(jobs[1], str(after))))
    settings = WorkSettings(rules_dir=str(rules_dir) if rules_dir else None, diagnose=True)
    con = memory_catalog()
    try:
        base, notes_b = load_side(con, str(before), settings)
        new, notes_n = load_side(con, str(after), settings)
        different = model_difference(*load_identities(con, [base, new])) or ""
        if different and not force:
            raise DifferentModels(base, new, different, [*notes_b, *notes_n])
        found = diff_runs(con, base, new)
    finally:
        con.close()
    warning = [f"DIFFERENT MODELS compared (--force): {different}"] if different else []
    return Diff(run=replace(found, notes=(*warning, *notes_b, *notes_n, *found.notes)), different_models=different)
