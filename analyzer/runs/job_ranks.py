"""A batch's job ranks read as `diagnose` writes them: their findings explained by their job's findings.

A batch judges a job's ranks in run chunks and the job in a job chunk, in any order. A rank judged
after its job gets its job's explanations (their rows as the job's worker sent them,
``job_catalog.JOB_EXPLAINS``) applied by ``job/explained.py`` before it is committed; a rank committed
before its job keeps its findings rows with what explaining them needs (``work.EXPLAIN_INPUTS``) here,
and once the job is judged, the rows of those it explains replace theirs in the job's own transaction.
Runs of no job pass straight through.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from analyzer.job.explained import explained_findings, rule_waits
from analyzer.rule_engine.model import ExplainedBy, Explanation, Finding
from analyzer.runs.job_catalog import JOB_EXPLAINS, JobTask
from analyzer.runs.work import (
    EXPLAIN_INPUTS,
    RunTables,
    RunTask,
    WorkSettings,
    batch_rules,
    catalog_schema,
    findings_rows,
    mark_converting,
)

Done = list[tuple[RunTask, RunTables]]


class RankHold:
    """The findings of the batch's job ranks committed before their job was judged, until it is."""

    def __init__(self, jobs: list[JobTask], settings: WorkSettings) -> None:
        # per job, the export folders of its ranks that are runs of their own (they hold per-task data)
        self._paths_of = {t.label: sorted(str(r.source.root) for r in t.job.ranks if r.has_kernels) for t in jobs}
        self.paths = {path for paths in self._paths_of.values() for path in paths}
        self._waiting: dict[str, pa.Table] = {}  # export folder -> its findings rows, with their EXPLAIN_INPUTS
        self._ready: dict[str, list[dict[str, Any]]] = {}  # export folder -> its job's explanation rows
        self._settings = settings

    def runs(self, done: Done) -> Done:
        """A chunk's runs as they are to be committed now, their findings rows without the EXPLAIN_INPUTS: a job
        rank whose job is judged explained, one whose job is not judged yet as it is (its rows kept here)."""
        out = []
        for task, tables in done:
            findings = tables.get("findings")
            if findings is None or EXPLAIN_INPUTS[0] not in findings.column_names:
                out.append((task, tables))
                continue
            plain = {**tables, "findings": findings.drop_columns(list(EXPLAIN_INPUTS))}
            path = task.export_path
            if path in self._ready:
                found = self._explained([(findings, self._ready[path])])
                plain = plain if found is None else {**plain, "findings": _merged(plain["findings"], found)}
            elif path in self.paths:
                self._waiting[path] = findings
            out.append((task, plain))
        return out

    def job(self, task: JobTask, tables: RunTables) -> list[pa.Table]:
        """The findings rows, explained, of the runs of a judged (or failed) job's ranks committed before it
        whose findings its findings change: they replace those runs' rows (``tables``: the job's, with its
        explanation rows, which ``commit_jobs`` leaves out)."""
        explains = tables.get(JOB_EXPLAINS)
        by_path: dict[str, list[dict[str, Any]]] = {}
        for row in explains.to_pylist() if explains is not None else []:
            by_path.setdefault(row["export_path"], []).append(row)
        parts = []
        for path in self._paths_of.get(task.label, ()):
            self._ready[path] = by_path.get(path, [])
            waiting = self._waiting.pop(path, None)
            if waiting is not None and self._ready[path]:
                parts.append((waiting, self._ready[path]))
        found = self._explained(parts)
        return [] if found is None else [found]

    def _explained(self, parts: list[tuple[pa.Table, list[dict[str, Any]]]]) -> pa.Table | None:
        """The findings rows of the runs whose findings the explanation rows change, of the ranks of ``parts``
        (each: its findings rows with their EXPLAIN_INPUTS, its job's explanation rows); None when none changes."""
        parts = [part for part in parts if part[1]]
        if not parts:
            return None
        waits = rule_waits(batch_rules(self._settings.rules_dir))
        explains = {cid: _explanations(rows, cid, waits) for f, rows in parts for cid in _run_ids(f)}
        return explained_table(pa.concat_tables([f for f, _ in parts]), explains)


def _run_ids(findings: pa.Table) -> list[str]:
    return findings.column("run_id").unique().to_pylist()


def _merged(findings: pa.Table, changed: pa.Table) -> pa.Table:
    """A rank's findings rows with those of the runs of ``changed`` replaced by its rows."""
    kept = findings.filter(pc.invert(pc.is_in(findings.column("run_id"), changed.column("run_id").unique())))
    return pa.concat_tables([kept, changed], promote_options="default")  # kept: without the DRIVER_COLUMNS


def explained_table(findings: pa.Table, explains: dict[str, list[Explanation]]) -> pa.Table | None:
    """The findings rows of the runs whose findings ``explains`` (per run id, its job's explanations) change,
    explained and ranked again (None: none changes); ``findings``: the rows, with their EXPLAIN_INPUTS, of
    every run of ``explains``."""
    mark_converting()
    by_run: dict[str, list[dict[str, Any]]] = {}
    for row in findings.to_pylist():
        by_run.setdefault(row["run_id"], []).append(row)
    _, steps, span = EXPLAIN_INPUTS
    out = []
    for cid, rows in by_run.items():
        found = [_finding(row) for row in rows]
        explained = explained_findings(found, explains[cid], (rows[0][steps], rows[0][span]))
        out += [] if explained is None else findings_rows(cid, explained)
    return pa.Table.from_pylist(out, schema=catalog_schema("findings")) if out else None


def _explanations(rows: list[dict[str, Any]], cid: str, waits: dict[str, tuple[str, str]]) -> list[Explanation]:
    """The job's explanations of the rank's run ``cid``, in its findings' order (``rows``: the rank's)."""
    out = []
    for r in sorted(rows, key=lambda r: r["position"]):
        by = ExplainedBy(r["code"], r["rule"], r["subject"], r["note"], "")
        if r["explained_us"] is None:  # ranks alone: whole findings
            out.append(Explanation(by, tuple(r["categories"]), (cid,)))
        else:
            costs = {cid: r["explained_us"]}
            out.append(Explanation(by, tuple(r["categories"]), (cid,), costs, waits, r["job_steps"]))
    return out


_FINDING_FIELDS = (
    "rule", "code", "severity", "category", "title", "run_id", "subject", "value", "threshold", "metric", "unit",
    "impact_us", "span_share", "confidence", "message",
)  # fmt: skip


def _finding(row: dict[str, Any]) -> Finding:
    """A finding as its catalog row holds it, with its amount before impacts were shared (its EXPLAIN_INPUTS'
    first: what part of it a job finding explains is taken off that)."""
    finding = Finding(**{k: row[k] for k in _FINDING_FIELDS}, advice_summary="", advice_steps=())
    return replace(finding, details={"impact_before_overlap_us": row[EXPLAIN_INPUTS[0]]})
