"""The per-run work of a batch: a plain function of (export path, settings) returning Arrow tables.

It holds no state and touches no catalog, so any executor can run it: the local process pool
(``executor.py``) or a Dask cluster (``dask_executor.py``). Whatever goes wrong becomes a ``failures`` row.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from analyzer.diagnosis import diagnose_many
from analyzer.ingest import load_export
from analyzer.ingest.loader import usable_run_ids
from analyzer.ingest.model import IngestError
from analyzer.ingest.sql_values import in_list
from analyzer.job.explained import explained_amount, span_basis
from analyzer.logs.catalog_rows import log_finding_rows, read_logs_beside
from analyzer.metrics.summary import runs_summary_tables
from analyzer.rule_engine.loader import default_rules_dir, load_rules
from analyzer.rule_engine.model import ConfiguredRules, ExplainedBy, Rule
from analyzer.rule_engine.timeline_use import unread_timeline_kinds
from analyzer.rule_engine.views import create_views
from analyzer.runs.catalog_schema import CATALOG_TABLES
from analyzer.stop_signal import stop_requested


@cache
def _absent_marked(module: str) -> None:
    """Mark ``module`` absent when it is not installed: an import that failed is searched for along sys.path
    again on every try. Once per process."""
    try:
        __import__(module)
    except ImportError:
        # None: "not importable", as the import system reads it
        sys.modules[module] = None  # type: ignore[assignment]


def mark_converting() -> None:
    """Before converting Python values to Arrow (a run's ``judge``, a job's analysis, a failures row, the driver's
    explained rows): pyarrow tries to import its optional dateutil on every conversion, so it is marked absent
    once, by the process's first such task (a pool's or Dask's worker, or this one), not by every command that
    imports this module."""
    _absent_marked("dateutil")


RunTables = dict[str, pa.Table]


@dataclass(frozen=True)
class RunTask:
    """One export to analyse: where it is on disk, how the catalog names its place, its fingerprint."""

    export_path: str
    label: str
    fingerprint: str
    # a rank of a job the batch judges: its findings rows bring what explaining them needs (EXPLAIN_INPUTS)
    job_rank: bool = False


@dataclass(frozen=True)
class WorkSettings:
    """What every run of a batch is analysed with. Picklable; holds paths as strings."""

    rules_dir: str | None = None
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    diagnose: bool = True
    model_name: str | None = None  # user label, overrides metadata
    batch_size: int | None = None  # user label, overrides metadata


@lru_cache(maxsize=4)
def batch_rules(rules_dir: str | None) -> tuple[Rule, ...]:
    """The rules of a batch (``WorkSettings.rules_dir``), read once per worker process: every run and
    job of the batch is judged by the same rule files."""
    return tuple(load_rules(Path(rules_dir) if rules_dir else default_rules_dir()))


def unread_kinds(settings: WorkSettings) -> frozenset[str]:
    """The timeline kinds the batch's rules never read, as ``diagnose`` leaves them out: the catalog holds no
    timeline row, so they would be read, stored and never looked at."""
    return _unread_kinds(settings.rules_dir)


@lru_cache(maxsize=4)
def _unread_kinds(rules_dir: str | None) -> frozenset[str]:
    # once per worker, as the rules are read: searching every rule's SQL costs milliseconds, paid per run otherwise
    return unread_timeline_kinds(batch_rules(rules_dir))


def catalog_run_id(ingest_run_id: str, source_id: str, fingerprint: str) -> str:
    """'<folder>@<8 fingerprint digits>' plus any '/dev<N>' suffix.

    >>> catalog_run_id("rank0_ascend_pt/dev1", "rank0_ascend_pt", "0123456789abcdef")
    'rank0_ascend_pt@01234567/dev1'
    """
    return f"{source_id}@{fingerprint[:8]}{ingest_run_id[len(source_id) :]}"


# The start of a failure's message when the machinery lost the item (a worker or scheduler gone, a worker
# without the package), not the input: the catalog does not count it as known, so the next batch retries it.
INFRASTRUCTURE = "infrastructure: "


def failure_table(label: str, fingerprint: str, message: str) -> RunTables:
    """The tables of a run that failed: one failures row."""
    mark_converting()
    schema = _arrow_schema("failures")
    return {
        "failures": pa.Table.from_pylist(
            [{"path": label, "fingerprint": fingerprint, "message": message}], schema=schema
        )
    }


def analyze_run(task: RunTask, settings: WorkSettings) -> RunTables:
    """Ingest and diagnose one export; return its catalog rows (or a failures row), never raise."""
    try:
        ingested = load_export(Path(task.export_path), left_out_kinds=unread_kinds(settings))
    except IngestError as exc:
        return failure_table(task.label, task.fingerprint, exc.problem)  # the label names the run
    except Exception as exc:  # a worker never dies on bad input
        if stop_requested():
            raise
        return failure_table(task.label, task.fingerprint, f"ingest failed: {type(exc).__name__}: {exc}")
    try:
        return _run_tables(ingested, task, settings)
    except Exception as exc:
        if stop_requested():
            raise
        return failure_table(task.label, task.fingerprint, f"analysis failed: {type(exc).__name__}: {exc}")
    finally:
        ingested.con.close()


def _run_tables(ingested, task: RunTask, settings: WorkSettings) -> RunTables:
    con = ingested.con
    usable = usable_run_ids(con, ingested.run_ids)  # the engine's one definition, as `diagnose` reads it
    if not usable:
        return unusable_table(task, ingested)
    source_id = ingested.sources[0].source_id
    runs = [(rid, catalog_run_id(rid, source_id, task.fingerprint)) for rid in usable]
    # before the rules: the logs' host activities explain gaps, their failed tasks name operators
    logs = read_logs_beside(con, Path(task.export_path), usable) if settings.diagnose else []
    judged = judge(con, runs, settings)
    log_rows = log_finding_rows(con, logs, Path(task.export_path), _configured(settings))
    return catalog_tables(task, source_id, runs, judged, log_rows)


def unusable_table(task: RunTask, ingested) -> RunTables:
    """The failures row of an export that gave no usable run."""
    return failure_table(task.label, task.fingerprint, f"nothing usable: {_why_unusable(ingested.problems)}")


@dataclass(frozen=True)
class Judged:
    """The runs of one connection judged, keyed by ingest run id: ranked findings, and summary tables; their
    runs rows (column ``rid``: the ingest run id) and the connection's ingest problems (``sid``: the source id)."""

    findings: dict[str, list]
    summaries: dict[str, dict[str, pa.Table]]
    runs: pa.Table
    problems: pa.Table
    bases: dict[str, tuple[int, float | None]]  # job/explained.span_basis per run


# The catalog_runs columns of the runs table; $model and $bs: the user's labels, overriding the metadata's.
_RUNS_SQL = f"""
SELECT run_id AS rid, device_id, rank_id, producer, export_type, cann_version, torch_npu_version, chip,
       coalesce($model, model_name) AS model_name, coalesce($bs, batch_size) AS batch_size, profiler_level,
       aic_metrics, aic_mode, pmu_collected, not_collected
FROM runs WHERE {in_list("run_id", "$rids")}
"""

_PROBLEMS_SQL = """
SELECT run_id AS sid, file, location, severity, problem, hint FROM ingest_problems
ORDER BY severity, file, location, problem
"""


def judge(con, runs: list[tuple[str, str]], settings: WorkSettings) -> Judged:
    """Judge every (ingest run id, catalog run id) of ``runs`` on ``con``: one export's runs, or a chunk's
    (``chunk_work.py``). The one place a batch calls the diagnosis and the summaries."""
    mark_converting()
    rids = [rid for rid, _ in runs]
    findings, bases = _findings_by_run(con, rids, settings)
    create_views(con)  # run_metrics reads the helper views (kept from the diagnosis when it ran)
    labels = {"rids": rids, "model": settings.model_name, "bs": settings.batch_size}
    return Judged(
        findings,
        runs_summary_tables(con, runs),
        con.sql(_RUNS_SQL, params=labels).to_arrow_table(),
        con.sql(_PROBLEMS_SQL).to_arrow_table(),
        bases,
    )


def catalog_tables(
    task: RunTask, source_id: str, runs: list[tuple[str, str]], judged: Judged, log_rows: list
) -> RunTables:
    """The catalog rows of one export's judged ``runs`` (ingest run id, catalog run id) of ``judged``, which
    may hold other exports' runs too."""
    parts: dict[str, list[pa.Table]] = {}
    for rid, cid in runs:
        tables = dict(judged.summaries[rid])
        keys = {"path": task.label, "fingerprint": task.fingerprint, "run_id": cid}
        tables["catalog_runs"] = _rows_of(judged.runs, "rid", rid, keys)
        basis = (judged.bases.get(rid) or span_basis(None)) if task.job_rank else None
        tables["findings"] = findings_table(cid, judged.findings.get(rid, []), basis)
        tables["run_problems"] = _rows_of(judged.problems, "sid", source_id, {"run_id": cid})
        tables["log_findings"] = pa.Table.from_pylist(
            [{**row, "run_id": cid} for row in log_rows], schema=_arrow_schema("log_findings")
        )
        for name, table in tables.items():
            # findings: made in its own schema (a job rank's with its EXPLAIN_INPUTS)
            parts.setdefault(name, []).append(table if name == "findings" else _as_catalog(name, table))
    return {name: pa.concat_tables(ts) for name, ts in parts.items()}


# The columns a job rank's findings rows bring besides the catalog's (the driver takes them off): what explaining
# its findings needs (job/explained.py) that the catalog rows lack: each finding's amount before impacts were
# shared, and its run's span basis (its steps, or 0, and its span). Columns, not a table: each table a worker
# sends back costs its pickling for every run.
EXPLAIN_INPUTS = ("input_amount_us", "input_steps", "input_span_us")


def _as_catalog(name: str, table: pa.Table) -> pa.Table:
    """``table`` with the columns and types of the catalog table ``name`` (cast only when they differ)."""
    schema = _arrow_schema(name)
    table = table.select(schema.names)
    return table if table.schema.equals(schema, check_metadata=True) else table.cast(schema)


def _rows_of(table: pa.Table, key: str, value: str, columns: dict[str, str]) -> pa.Table:
    """The rows whose ``key`` is ``value`` (in their order), without ``key``, with the text ``columns`` added."""
    rows = table.filter(pc.equal(table.column(key), value)).drop_columns([key])
    for name, text in columns.items():
        rows = rows.append_column(name, pa.repeat(pa.scalar(text, pa.string()), rows.num_rows))
    return rows


def _why_unusable(problems: list) -> str:
    """Why an export gave no usable run: its first errors, else its first warnings (rows kept without a start
    time or a duration are warnings), else that no device task was found."""
    for severity in ("error", "warning"):
        lines = [p.line() for p in problems if p.severity == severity][:3]
        if lines:
            return "; ".join(lines)
    return "no device task could be read"


def _findings_by_run(
    con, run_ids: list[str], settings: WorkSettings
) -> tuple[dict[str, list], dict[str, tuple[int, float | None]]]:
    """Ranked findings per run from ``analyzer.diagnosis.diagnose_many`` (the runs judged in one pass), and each
    run's ``span_basis``; empty when diagnosis is off."""
    if not settings.diagnose:
        return {}, {}
    findings, bases = {}, {}
    for d in diagnose_many(con, run_ids, _configured(settings)):  # the diagnoses themselves are not kept
        findings[d.run_id], bases[d.run_id] = list(d.findings), span_basis(d.summary)
    return findings, bases


def _configured(settings: WorkSettings) -> ConfiguredRules:
    return ConfiguredRules(batch_rules(settings.rules_dir), settings.params)


def findings_table(cid: str, findings: list, basis: tuple[int, float | None] | None = None) -> pa.Table:
    """The findings rows of the run ``cid`` (``findings_rows``), without the DRIVER_COLUMNS (NULL: a worker's
    findings are explained by no job finding); with ``basis`` (a job rank's: its span basis), its
    EXPLAIN_INPUTS."""
    rows = findings_rows(cid, findings)
    if basis is None:
        return pa.Table.from_pylist(rows, schema=_arrow_schema("findings"))
    amounts, (steps, span) = [explained_amount(f) for f in findings], basis
    inputs = {EXPLAIN_INPUTS[1]: steps, EXPLAIN_INPUTS[2]: span}
    rows = [{**row, EXPLAIN_INPUTS[0]: amount, **inputs} for row, amount in zip(rows, amounts, strict=True)]
    return pa.Table.from_pylist(rows, schema=_with_inputs())


@cache
def _with_inputs() -> pa.Schema:
    """The schema of a job rank's findings rows: the worker's columns and the EXPLAIN_INPUTS."""
    kinds = (pa.float64(), pa.int64(), pa.float64())
    return pa.schema(
        [*_arrow_schema("findings"), *(pa.field(n, t) for n, t in zip(EXPLAIN_INPUTS, kinds, strict=True))]
    )


def findings_rows(cid: str, findings: list) -> list[dict[str, Any]]:
    """The findings rows of the run ``cid``, in the order given; the explained_* columns of a finding that a
    finding of its job explains, else none (NULL)."""
    return [
        {
            "run_id": cid,
            "rank": i,
            "code": f.code,
            "rule": f.rule,
            "severity": f.severity,
            "category": f.category,
            "title": f.title,
            "subject": f.subject,
            "value": f.value,
            "threshold": f.threshold,
            "metric": f.metric,
            "unit": f.unit,
            "impact_us": f.impact_us,
            "span_share": f.span_share,
            "confidence": f.confidence,
            "message": f.message,
            **({} if f.explained_by is None else _explained_columns(f.explained_by, f.details)),
        }
        for i, f in enumerate(findings, start=1)
    ]


def _explained_columns(by: ExplainedBy, details: dict[str, Any]) -> dict[str, Any]:
    """The explained_* columns of a finding (``details``: its details): what diagnosis.json says of the job
    finding that explains it, ``by`` (the amounts only when the job rule's [explains] gave them)."""
    amounts = by.explained_ms is not None
    return {
        "explained_by": by.text,
        "explained_code": by.code,
        "explained_rule": by.rule,
        "explained_subject": by.subject,
        "explained_note": by.note,
        "severity_before_explained": by.severity,
        "explained_ms": by.explained_ms,
        "explained_amount_ms": by.amount_ms,
        "explained_own_ms": by.own_ms,
        "explained_per": by.per if amounts else None,
        "explained_waits": by.waits if amounts else None,
        "explained_partial": by.partial if amounts else None,
        "impact_before_explained_us": details.get("impact_before_explained_us"),
    }


_TYPES = {
    "VARCHAR": pa.string(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "VARCHAR[]": pa.list_(pa.string()),
    "DOUBLE[]": pa.list_(pa.float64()),
}


# The columns a worker's rows leave out (they are NULL in the catalog): the driver fills them for the runs it
# explains (runs/job_ranks.py). A worker's tables are pickled back to the driver, and every column costs that
# for every run.
DRIVER_COLUMNS = {"findings": frozenset(c.name for c in CATALOG_TABLES["findings"].columns if "explained" in c.name)}


@cache
def _arrow_schema(table: str) -> pa.Schema:
    """The Arrow schema of the catalog table's columns that a worker sends (all but its DRIVER_COLUMNS)."""
    # cached: asked for every table of every run of a chunk
    left_out = DRIVER_COLUMNS.get(table, frozenset())
    return pa.schema([(c.name, _TYPES[c.type]) for c in CATALOG_TABLES[table].columns if c.name not in left_out])


@cache
def catalog_schema(table: str) -> pa.Schema:
    """The Arrow schema of every column of the catalog table (the driver's rows)."""
    return pa.schema([(c.name, _TYPES[c.type]) for c in CATALOG_TABLES[table].columns])
