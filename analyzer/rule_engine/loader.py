"""Rule files (TOML, see rules/TEMPLATE.toml) -> Rule objects. Loading only (checks: validation)."""

from __future__ import annotations

import tomllib
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from analyzer.errors import TriageError
from analyzer.ingest.finalize import SETTINGS
from analyzer.rule_engine.model import ExplainsSpec, ReportSpec, Rule

TEMPLATE_NAME = "TEMPLATE.toml"


class RuleFileError(TriageError):
    """A rule file that cannot be parsed at all; the message names the file (``path``) and the problem
    (``problem``, for a listing already keyed by file)."""

    def __init__(self, path: Path | str, problem: str) -> None:
        super().__init__(problem, path)

    def __reduce__(self) -> tuple[type[RuleFileError], tuple[str, str]]:  # its arguments come path first
        return type(self), (self.file, self.problem)

    @property
    def path(self) -> str:
        return self.file


def rule_files(rules_dir: Path) -> list[Path]:
    """Every rule file under ``rules_dir`` (category folders), sorted; the template excluded."""
    return sorted(p for p in Path(rules_dir).glob("*/*.toml") if p.name != TEMPLATE_NAME)


def _read_rule_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise RuleFileError(path, f"cannot be read: {exc.strerror}") from None


def _rule_of_bytes(path: Path | str, data: bytes) -> Rule:
    """The rule in a file's bytes; RuleFileError when they are not UTF-8 TOML."""
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RuleFileError(path, f"not valid TOML: {exc}") from None
    return rule_from_document(doc, path)


def rule_from_document(doc: dict[str, Any], path: Path | str = "") -> Rule:
    """A Rule from a parsed rule document; absent fields become empty (validation reports them)."""
    rule, text = doc.get("rule", {}), doc.get("doc", {})
    finding, advice = doc.get("finding", {}), doc.get("advice", {})
    collect = str(rule.get("collect", ""))
    return Rule(
        id=str(rule.get("id", "")),
        name=str(rule.get("name", "")),
        title=str(rule.get("title", "")),
        category=str(rule.get("category", "")),
        severity=str(rule.get("severity", "")),
        status=str(rule.get("status", "")),
        since=str(rule.get("since", "")),
        scope=str(rule.get("scope", "run")),
        requires={str(t): tuple(map(str, cols)) for t, cols in dict(rule.get("requires", {})).items()},
        params=dict(doc.get("params", {})),
        sql=str(doc.get("query", {}).get("sql", "")),
        metric=str(finding.get("metric", "")),
        unit=str(finding.get("unit", "")),
        polarity=str(finding.get("polarity", "")),
        message=str(finding.get("message", "")),
        advice_summary=str(advice.get("summary", "")),
        advice_steps=tuple(map(str, advice.get("steps", ()))),
        doc_checks=str(text.get("checks", "")).strip(),
        doc_why=str(text.get("why", "")).strip(),
        references=tuple(map(str, text.get("references", ()))),
        enable_hint=SETTINGS.get(collect, collect),
        collect=collect,
        evidence_sql=str(doc.get("evidence", {}).get("sql", "")),
        path=str(path),
        doc_impact=str(text.get("impact", "")).strip(),
        threshold_param=str(finding.get("threshold_param", "")),
        impact_family=str(doc.get("impact", {}).get("family", "")),
        impact_role=str(doc.get("impact", {}).get("role", "part")),
        impact_waits=str(doc.get("impact", {}).get("waits", "")),
        schema_version=int(doc.get("schema_version", 0) or 0),
        report=_report_spec(doc.get("report", {})),
        explains=_explains_spec(doc.get("explains", {})),
    )


def _report_spec(table: Any) -> ReportSpec:
    """The [report] table; a value that is not a table reads as one unknown key."""
    if not isinstance(table, dict):
        return ReportSpec(unknown=("[report] (not a table)",))
    known = ("chart", "zoom", "limit_param", "marks")
    return ReportSpec(
        **{k: str(table.get(k, "")) for k in known},
        unknown=tuple(sorted(k for k in table if k not in known)),
    )


def _explains_spec(table: Any) -> ExplainsSpec:
    """The [explains] table of a job rule; a value that is not a table reads as one unknown key."""
    if not isinstance(table, dict):
        return ExplainsSpec(unknown=("[explains] (not a table)",))
    known = ("categories", "note", "sql")
    return ExplainsSpec(
        categories=tuple(map(str, table.get("categories", ()))),
        note=str(table.get("note", "")),
        sql=str(table.get("sql", "")),
        unknown=tuple(sorted(k for k in table if k not in known)),
    )


def load_rule(path: Path) -> Rule:
    """Load one rule file."""
    return _rule_of_bytes(path, _read_rule_bytes(Path(path)))


def load_rules(rules_dir: Path) -> list[Rule]:
    """Load every rule file under ``rules_dir``, in file order.

    The files are read every time, but parsed again only when their names or bytes changed: a batch
    worker, a library user or a test session judges many runs by the same files, and parsing them
    costs more than a small run's rule queries. Keyed by content, not modification time, whose
    granularity (a clock tick) would let a file rewritten within it pass for the old one."""
    return list(_rules_of(tuple((str(p), _read_rule_bytes(p)) for p in rule_files(rules_dir))))


@lru_cache(maxsize=8)
def _rules_of(files: tuple[tuple[str, bytes], ...]) -> tuple[Rule, ...]:
    """The rules of (path, bytes) pairs. One parse serves every caller: a Rule is frozen, and no caller
    changes the dicts it holds (params, requires)."""
    return tuple(_rule_of_bytes(p, data) for p, data in files)


def default_rules_dir() -> Path:
    """The built-in rules folder (only the CLI uses this default): the checkout's rules/ when running
    from a clone, else the copy installed as the package data of ``analyzer.builtin_rules``."""
    checkout = Path(__file__).resolve().parents[2] / "rules"
    if (checkout / "__init__.py").is_file():
        return checkout
    return Path(str(resources.files("analyzer.builtin_rules")))


@cache
def _built_in_root() -> Path:
    """default_rules_dir(), resolved once: run_rules asks is_built_in of every rule of every run."""
    return default_rules_dir().resolve()


def is_built_in(rule: Rule) -> bool:
    """True for a rule read from the built-in rules folder (SQL of the program, not of the user)."""
    return bool(rule.path) and Path(rule.path).resolve().is_relative_to(_built_in_root())
