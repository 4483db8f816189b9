"""Run rules over the normalized tables: skip what the data cannot support, rows -> Findings."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any, cast

import duckdb

from analyzer.duckdb_connect import close_to_files, fixed_order
from analyzer.errors import first_line
from analyzer.rule_engine.availability import Availability, required_keys
from analyzer.rule_engine.chip_table import CHIP_KEY
from analyzer.rule_engine.evidence_count import count_rows
from analyzer.rule_engine.loader import is_built_in
from analyzer.rule_engine.message_format import fill_template
from analyzer.rule_engine.model import ALL_RUNS, ConfiguredRules, Finding, Rule, RuleOutcome
from analyzer.rule_engine.set_evidence import Evidence, evidence_of
from analyzer.rule_engine.set_query import rows_by_run
from analyzer.rule_engine.validation import FINDING_COLUMNS, sql_params
from analyzer.rule_engine.views import create_views
from analyzer.vocabulary import CONFIDENCES, SEVERITIES, Severity, member

# Row columns with a meaning of their own; every other column goes into Finding.details.
_SPECIAL_COLUMNS = set(FINDING_COLUMNS) | {"threshold", "span_us", "severity", "confidence"}


def bind_params(sql: str, values: dict[str, Any]) -> dict[str, Any]:
    """Only the params the SQL uses (DuckDB rejects unused named parameters)."""
    used = sql_params(sql)
    return {k: v for k, v in values.items() if k in used}


def _skip_reason(rule: Rule, missing: list[str], run_count: int) -> str:
    if run_count > 1:
        return f"needs {', '.join(missing)}, which none of these runs has (all NULL or absent)"
    return f"needs {', '.join(missing)}, which this {rule.scope} does not have (all NULL or absent)"


# Values that are JSON-friendly as they are, told by their exact type: most values a query returns are these.
_PLAIN_TYPES = frozenset({str, int, bool, type(None)})


def plain_value(value: Any) -> Any:
    """A JSON-friendly value: Decimal -> float, NaN/inf -> None, dates -> ISO text, lists and dicts
    converted item by item."""
    if type(value) in _PLAIN_TYPES:
        return value
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain_value(v) for k, v in value.items()}
    return value


def _number(value: Any) -> float | None:
    """A number a rule returned, kept to 12 significant digits: DuckDB sums in parallel, so a float
    total may differ in its last bits from one run to the next, and a finding must not. (A job's
    queries run on one thread instead: analyzer/job/fixed_order.py says why.)

    >>> _number(0.25865663604341366) == _number(0.2586566360434137)
    True
    """
    value = plain_value(value)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return float(f"{value:.12g}") if math.isfinite(value) else float(value)


def _message(rule: Rule, values: dict[str, Any]) -> str:
    try:
        return fill_template(rule.message, values)
    except (KeyError, ValueError, TypeError, IndexError, AttributeError):
        return f"{values.get('subject')}: {rule.metric} = {values.get('value')}"


# A rule's rows of one run, read by the set query of several runs (set_query.py): (columns, rows).
_Rows = tuple[list[str], list[tuple[Any, ...]]]


def _binding(planned: _Planned) -> dict[str, Any]:
    """The values of the parameters of the rule's SQL on its run(s)."""
    rule, run_ids = planned.rule, planned.run_ids
    return {**planned.params, "run_id": outcome_run(rule, run_ids), "run_ids": list(run_ids)}


def _ties(rows: _Rows) -> bool:
    """Whether two rows share what ranking and impact sharing order findings by (subject, impact): only then
    would their order, which the set query does not keep, change the diagnosis."""
    columns, found = rows
    keys = [(str(row.get("subject")), round(_number(row.get("impact_us")) or 0.0, 3)) for row in _dicts(columns, found)]
    return len(set(keys)) < len(keys)


def _dicts(columns: list[str], rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    return [dict(zip(columns, row, strict=True)) for row in rows]


class _RuleRun:
    """One rule over one run (or one set of runs): query, evidence, findings. ``read``: what the set queries
    of several runs read for this run, else None (then the rule's own queries run). Rows read that tie in
    what orders findings are read again by the rule's own query: the set query does not keep their order."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        planned: _Planned,
        evidence_limit: int,
        spans: dict[str, float | None],
        read: _SetRead | None = None,
    ) -> None:
        self.con, self.rule, self.params, self.run_ids = con, planned.rule, planned.params, planned.run_ids
        self.evidence_limit, self.spans = evidence_limit, spans
        self.binding = _binding(planned)
        rows = read.rows if read else None
        self.rows = None if rows is None or _ties(rows) else rows
        self.evidence_read = read.evidence if read else {}

    def run(self) -> tuple[list[Finding], RuleOutcome]:
        """Run the rule (it passed its precheck): its findings, or a 'failed' outcome on a SQL error."""
        rule, about = self.rule, outcome_run(self.rule, self.run_ids)
        try:
            found = self.findings()
        except duckdb.Error as exc:
            first = first_line(exc)
            return [], RuleOutcome(rule.name, rule.id, about, "failed", reason=f"query failed: {first}")
        return found, RuleOutcome(rule.name, rule.id, about, "ran", finding_count=len(found))

    def findings(self) -> list[Finding]:
        if self.rows is not None:
            columns, rows = self.rows
        else:
            cursor = self.con.execute(self.rule.sql, bind_params(self.rule.sql, self.binding))
            columns = [d[0] for d in cursor.description]
            rows = cursor.fetchall()
        return [self._finding(row) for row in _dicts(columns, rows)]

    def _evidence(self, run_id: str, subject: Any) -> tuple[tuple[str, ...], tuple[tuple[Any, ...], ...], int]:
        if not self.rule.evidence_sql:
            return (), (), 0
        if (read := self.evidence_read.get((run_id, subject))) is not None:
            columns, rows, total = read
            return columns, tuple(tuple(plain_value(v) for v in row) for row in rows), total
        values = {**self.binding, "run_id": run_id, "subject": subject}
        sql = self.rule.evidence_sql.rstrip().rstrip(";")  # it is run inside an outer query
        params = bind_params(sql, values)
        # Only the rows kept become Python objects; the rest are counted by DuckDB (an evidence query
        # may return a row per gap, millions on a big export). DuckDB keeps the evidence query's
        # ORDER BY under the outer LIMIT.
        cursor = self.con.execute(f"SELECT * FROM ({sql}) LIMIT {int(self.evidence_limit)}", params)
        columns = tuple(d[0] for d in cursor.description)
        top = tuple(tuple(plain_value(v) for v in row) for row in cursor.fetchall())
        if len(top) < self.evidence_limit:
            return columns, top, len(top)
        return columns, top, count_rows(self.con, sql, params)

    def _span_us(self, row: dict[str, Any]) -> float | None:
        """The span the finding's share is of: the row's own span_us, else its run's analysed span."""
        return _number(row.get("span_us")) or self.spans.get(row.get("run_id") or "")

    def _finding(self, row: dict[str, Any]) -> Finding:
        rule = self.rule
        impact = _number(row.get("impact_us")) or 0.0
        threshold = (
            _number(row["threshold"])
            if "threshold" in row
            else (_number(self.params.get(rule.threshold_param)) if rule.threshold_param else None)
        )
        span = self._span_us(row)
        run_id = str(row.get("run_id") or self.run_ids[0])
        ev_cols, ev_rows, ev_total = self._evidence(run_id, row.get("subject"))
        details = {k: plain_value(v) for k, v in row.items() if k not in _SPECIAL_COLUMNS}
        if ev_total > len(ev_rows):
            details["evidence_total_rows"] = ev_total
        plain = {k: plain_value(v) for k, v in row.items()}
        values = {**self.params, **plain, "threshold": threshold}
        # a rule's own severity is one of SEVERITIES: validation refuses a rule file that says otherwise
        severity = member(SEVERITIES, row.get("severity")) or cast(Severity, rule.severity)
        confidence = member(CONFIDENCES, row.get("confidence")) or "medium"
        return Finding(
            rule=rule.name,
            code=rule.id,
            severity=severity,
            category=rule.category,
            title=rule.title,
            run_id=run_id,
            subject=str(row.get("subject")),
            value=_number(row.get("value")),
            threshold=threshold,
            metric=rule.metric,
            unit=rule.unit,
            impact_us=impact,
            span_share=impact / span if span else None,
            confidence=confidence,
            message=_message(rule, values),
            advice_summary=rule.advice_summary,
            advice_steps=rule.advice_steps,
            evidence_columns=ev_cols,
            evidence=ev_rows,
            details=details,
        )


def outcome_run(rule: Rule, run_ids: tuple[str, ...] | list[str]) -> str:
    """The run an outcome is about ($run_id of its SQL): the run itself, or ALL_RUNS for a rule over several runs."""
    return ALL_RUNS if rule.scope == "runs" else run_ids[0]


def _skipped_whatever_the_data(rule: Rule, run_ids: tuple[str, ...], preview: bool) -> str | None:
    """Why the rule does not run on these runs before any data is looked at, or None."""
    if rule.status == "preview" and not preview:
        return "preview rule; run with --preview to enable it"
    if rule.scope == "runs" and len(run_ids) < 2:
        return (
            "compares several runs: judged once over all the runs of PATH; "
            f"report {ALL_RUNS}, written when it has a finding"
        )
    return None


def _precheck(
    rule: Rule, run_ids: tuple[str, ...], availability: Availability, reason: str | None
) -> RuleOutcome | None:
    """The 'skipped' outcome of a rule that does not run on these runs, or None when it runs;
    ``reason``: why it is skipped whatever the data (``_skipped_whatever_the_data``), or None."""
    if reason:
        hint = ""
    elif missing := availability.missing(rule, run_ids):
        reason, hint = _skip_reason(rule, missing, len(run_ids)), rule.enable_hint
    else:
        return None
    return RuleOutcome(rule.name, rule.id, outcome_run(rule, run_ids), "skipped", reason=reason, enable_hint=hint)


def build_views(con: duckdb.DuckDBPyConnection, configured: ConfiguredRules, *, every: bool = True) -> None:
    """The helper views for ``configured`` (its chip overrides), on the connection's threads; kept by the
    rules' own call while the tables are unchanged, so that a caller judging on one thread (a job's rules,
    job/fixed_order.py) builds them first. ``every=False``: only those its rules' queries and the runner read
    (a few rules need a few of them; those not made are made by the next caller reading them)."""
    texts = None if every else [_SPANS, *(t for r in configured.rules for t in rule_queries(r))]
    create_views(con, dict(configured.overrides.get(CHIP_KEY, {})), texts)


def rule_queries(rule: Rule) -> tuple[str, ...]:
    """The SQL a rule runs: its query, its evidence query and its [explains] query (each may be empty)."""
    return (rule.sql, rule.evidence_sql, rule.explains.sql)


_SPANS = "SELECT run_id, span_us FROM _run_span"


def _run_spans(con: duckdb.DuckDBPyConnection) -> dict[str, float | None]:
    """The analysed span of every run (_run_span, a row per run), read once for all the rules' findings."""
    return {run_id: _number(span) for run_id, span in con.execute(_SPANS).fetchall()}


def run_rules(
    con: duckdb.DuckDBPyConnection,
    configured: ConfiguredRules,
    run_ids: list[str],
    *,
    evidence_limit: int = 10,
    views_built: bool = False,
) -> tuple[list[Finding], list[RuleOutcome]]:
    """Run every rule: scope 'run' or 'job' once per id ($run_id), scope 'runs' once over all ($run_ids).

    Args:
        con: connection holding the normalized tables; the helper views its rules read are (re)created in it.
        configured: the (validated) rules with the user's overrides, and whether 'preview' rules run.
        run_ids: the runs to judge.
        evidence_limit: evidence rows kept per finding.
        views_built: the caller built the helper views for ``configured`` (``build_views``) and has changed
            no table since: they are not looked at again.

    Returns:
        (findings in rule and row order, one outcome per rule and run). A SQL error is a 'failed'
        outcome; missing data is a 'skipped' outcome with the reason and the enabling setting.

    Rule SQL may come from the user (``--rules``): when a rule is not one of the built-in rules, from here
    on no SQL on ``con``'s database reads or writes a file (``close_to_files``), as in `npu-triage query`.
    The built-in rules' SQL is the program's own: it leaves ``con`` as it was (a notebook's trace can still
    read files after a diagnosis).
    """
    results = _judge(con, configured, run_ids, evidence_limit, alone=False, views_built=views_built)
    return [f for _, found, _ in results for f in found], [outcome for _, _, outcome in results]


def run_rules_alone(
    con: duckdb.DuckDBPyConnection,
    configured: ConfiguredRules,
    run_ids: list[str],
    *,
    evidence_limit: int = 10,
    views_built: bool = False,
) -> dict[str, tuple[list[Finding], list[RuleOutcome]]]:
    """Per run, what ``run_rules(con, configured, [run])`` returns, every run judged as if alone (a rule of
    scope 'runs' is skipped on each), in one pass: a rule's query runs once for all the runs. ``views_built``:
    as for ``run_rules``."""
    judged: dict[str, tuple[list[Finding], list[RuleOutcome]]] = {r: ([], []) for r in run_ids}
    for group, found, outcome in _judge(con, configured, run_ids, evidence_limit, alone=True, views_built=views_built):
        judged[group[0]][0].extend(found)
        judged[group[0]][1].append(outcome)
    return judged


def _judge(
    con: duckdb.DuckDBPyConnection,
    configured: ConfiguredRules,
    run_ids: list[str],
    evidence_limit: int,
    alone: bool,
    views_built: bool,
) -> list[tuple[tuple[str, ...], list[Finding], RuleOutcome]]:
    """(runs, findings, outcome) of every (rule, run or runs) in rule order (``_plan``)."""
    if not all(is_built_in(r) for r in configured.rules):
        close_to_files(con)
    if not views_built:
        build_views(con, configured, every=False)
    planned = _plan(configured, run_ids, Availability(con), alone=alone)
    several = [p.run_ids for p in planned if p.rule.scope == "runs" and not p.skipped]
    if several:  # what the rules comparing runs read; not made (nor pyarrow loaded) when none of them runs
        from analyzer.rule_engine.scaling_views import create_run_scaling_views

        create_run_scaling_views(con, list(several[0]))
    spans = _run_spans(con)
    read = _set_reads(con, planned, evidence_limit)
    return [
        (p.run_ids, *(([], p.skipped) if p.skipped else _RuleRun(con, p, evidence_limit, spans, read.get(n)).run()))
        for n, p in enumerate(planned)
    ]


@dataclass(frozen=True)
class _SetRead:
    """What the set queries of a rule read for one run: its rows, the evidence of its findings by (run, subject)."""

    rows: _Rows
    evidence: dict[tuple[str, Any], Evidence]


def _set_reads(con: duckdb.DuckDBPyConnection, planned: list[_Planned], evidence_limit: int) -> dict[int, _SetRead]:
    """What the set queries read of each (rule, run), by position in ``planned``: for every rule of one run at
    a time that runs on several runs, its rows (set_query.py) and its findings' evidence (set_evidence.py). A
    rule whose set query fails is left out (it is then run per run, as alone), and so is a finding's evidence
    that the set query cannot put in order."""
    by_rule: dict[int, list[int]] = {}
    for n, p in enumerate(planned):
        if not p.skipped and len(p.run_ids) == 1:
            by_rule.setdefault(id(p.rule), []).append(n)
    sets = [positions for positions in by_rule.values() if len(positions) >= 2]
    if not sets:
        return {}
    reads = []
    # Every set query on one thread (rows_by_run says why), switched once for all of them: DuckDB resizes its
    # thread pool at each switch. Their evidence queries run after them, on the connection's threads as before.
    with fixed_order(con):
        for positions in sets:
            first = planned[positions[0]]
            runs = [planned[n].run_ids[0] for n in positions]
            reads.append((positions, first, rows_by_run(con, first.rule.sql, _binding(first), runs)))
    rows: dict[int, _SetRead] = {}
    for positions, first, read in reads:
        if read is not None:
            columns, found = read
            evidence = _set_evidence(con, first, columns, found, evidence_limit)
            rows.update((n, _SetRead((columns, found[planned[n].run_ids[0]]), evidence)) for n in positions)
    return rows


def _set_evidence(
    con: duckdb.DuckDBPyConnection, first: _Planned, columns: list[str], found: dict, limit: int
) -> dict[tuple[str, Any], Evidence]:
    """The evidence of every finding of the rule's rows ``found`` (by run), read at once; {} when the rule
    has no evidence query or a subject cannot be a key."""
    if not first.rule.evidence_sql:
        return {}
    rows = [(run, row) for run, of_run in found.items() for row in _dicts(columns, of_run)]
    keys = [(str(row.get("run_id") or run), row.get("subject")) for run, row in rows]
    try:
        keys = list(dict.fromkeys(keys))
    except TypeError:  # a subject that is a list or a map: asked per finding
        return {}
    return evidence_of(con, first.rule.evidence_sql, _binding(first), keys, limit)


@dataclass(frozen=True)
class _Planned:
    """One rule over one run, or over all the runs, with its params: its 'skipped' outcome, or None when it runs."""

    rule: Rule
    params: dict[str, Any]
    run_ids: tuple[str, ...]
    skipped: RuleOutcome | None


def _groups_of(configured: ConfiguredRules, run_ids: list[str], alone: bool) -> list[tuple[Rule, tuple[str, ...]]]:
    """Every (rule, what it is judged on) in rule order: each run (scope 'run') or job (scope 'job', whose
    job tables carry the job id as run_id) alone, or all the runs at once (scope 'runs', unless ``alone``)."""
    return [
        (rule, group)
        for rule in configured.rules
        for group in ([tuple(run_ids)] if rule.scope == "runs" and not alone else [(r,) for r in run_ids])
    ]


def _plan(
    configured: ConfiguredRules, run_ids: list[str], availability: Availability, *, alone: bool = False
) -> list[_Planned]:
    """Every (rule, run or runs) in rule order (``_groups_of``), prechecked. The data checks of all of them
    are asked at once (availability.py), leaving out the rules skipped whatever the data."""
    groups = _groups_of(configured, run_ids, alone)
    params = {id(rule): configured.params(rule) for rule in configured.rules}
    checked = [(rule, group, _skipped_whatever_the_data(rule, group, configured.preview)) for rule, group in groups]
    availability.prefetch(
        key for rule, group, reason in checked if reason is None for key in required_keys(rule, group)
    )
    return [
        _Planned(rule, params[id(rule)], group, _precheck(rule, group, availability, reason))
        for rule, group, reason in checked
    ]
