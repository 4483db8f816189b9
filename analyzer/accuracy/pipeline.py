"""The accuracy facade: DUMP and REFERENCE folders (and a profile) -> a judged AccuracyReport."""

from __future__ import annotations

from pathlib import Path

from analyzer.accuracy.comparison import compare_folders
from analyzer.accuracy.judge import AccuracyReport, judge
from analyzer.accuracy.profile_link import attach_profile
from analyzer.errors import TriageError
from analyzer.ingest.database import connect
from analyzer.ingest.model import IngestError, Problem
from analyzer.rule_engine.model import ConfiguredRules


class ProfileInputError(TriageError, ValueError):
    """A --profile export that cannot be read at all."""


def run_accuracy(
    dump: Path,
    reference: Path,
    configured: ConfiguredRules,
    profile: Path | None = None,
    threads: int | None = None,
    run_id: str | None = None,
) -> AccuracyReport:
    """Compare ``dump`` with ``reference``, attach ``profile``'s device times, run the accuracy rules; ``run_id``
    names the comparison (default: the dump folder's name).

    Raises ProfileInputError when the profile cannot be read at all (a user's mistake, named before the comparison).
    """
    con = connect()
    run_id = run_id or Path(dump).resolve().name
    problems: list[Problem] = []
    linked = None
    if profile is not None:
        from analyzer.accuracy.tables import create_accuracy_tables

        create_accuracy_tables(con)
        try:
            linked, problems = attach_profile(con, run_id, Path(profile))
        except IngestError as exc:
            raise ProfileInputError(f"--profile {profile}: {exc}") from None
    comparison = compare_folders(dump, reference, con, threads, run_id)
    comparison.problems = problems + comparison.problems
    report = judge(comparison, configured, has_profile=profile is not None)
    report.profile = linked
    return report
