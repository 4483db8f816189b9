"""The engine's closed vocabularies (severity, scope, status, confidence, category...), each written once as a Literal.

Validation and the runner take their tuples of allowed values from here, so a word added to
a vocabulary is allowed, checked and typed everywhere at once; mypy checks every literal written against it.
"""

from __future__ import annotations

from typing import Literal, TypeVar, get_args

# How sure and how actionable a finding is, least first (the order ranks findings).
Severity = Literal["info", "warning", "critical"]
# A problem met while reading input: 'error' lost data (exit code 3), the others lost nothing.
ProblemSeverity = Literal["error", "warning", "info"]
Confidence = Literal["high", "medium", "low"]
# What a rule judges: one run, several runs, a distributed job, a dump set against its reference, a log collection.
Scope = Literal["run", "runs", "job", "dump", "logs"]
ProfileScope = Literal["run", "runs"]  # the scopes `diagnose` judges a run (or several) by
Status = Literal["preview", "stable", "deprecated"]
Category = Literal["compute", "memory", "communication", "scheduling", "host", "job", "accuracy", "logs"]
Polarity = Literal["lower_is_better", "higher_is_better"]
Unit = Literal["ratio", "pct", "us", "ms", "count", "bytes", "mb", "gb_per_s", "mhz"]
ImpactFamily = Literal["device-idle", "operator-time", "job-wait", "none"]
ImpactRole = Literal["part", "umbrella"]
# What happened when one rule met one run.
OutcomeStatus = Literal["ran", "skipped", "failed"]

_V = TypeVar("_V", bound=str)


def member(words: tuple[_V, ...], value: object) -> _V | None:
    """``value`` as a word of ``words`` (typed as the vocabulary), or None when it is not one.

    >>> member(SEVERITIES, "warning"), member(SEVERITIES, "fatal")
    ('warning', None)
    """
    return next((w for w in words if w == value), None)


SEVERITIES: tuple[Severity, ...] = get_args(Severity)
CONFIDENCES: tuple[Confidence, ...] = get_args(Confidence)
SCOPES: tuple[Scope, ...] = get_args(Scope)
PROFILE_SCOPES: tuple[ProfileScope, ...] = get_args(ProfileScope)
STATUSES: tuple[Status, ...] = get_args(Status)
CATEGORIES: tuple[Category, ...] = get_args(Category)
POLARITIES: tuple[Polarity, ...] = get_args(Polarity)
UNITS: tuple[Unit, ...] = get_args(Unit)
IMPACT_FAMILIES: tuple[ImpactFamily, ...] = get_args(ImpactFamily)
IMPACT_ROLES: tuple[ImpactRole, ...] = get_args(ImpactRole)
