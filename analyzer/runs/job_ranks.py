"""A batch's job ranks read as `diagnose` writes them: their findings explained by their job's findings.

A batch judges a job's ranks in run chunks and the job in a job chunk, in any order. A rank judged
after its job gets its job's explanations (their rows as the job's worker sent them,
``job_catalog.JOB_EXPLAINS``) applied by ``job/explained.py`` before it is committed; a rank committed
before its job keeps its findings rows and what explaining them needs (``work.EXPLAIN_INPUTS``) here,
and once the job is judged, the rows of those it explains replace theirs in the job's own transaction.
Runs of no job pass straight through.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import pyarrow as pa

from analyzer.job.explained import explained_findings
from analyzer.rule_engine.model import ExplainedBy, Explanation, Finding
from analyzer.runs.job_catalog import JOB_EXPLAINS, JobTask
from analyzer.runs.work import EXPLAIN_INPUTS, RunTables, RunTask, WorkSettings, batch_rules, findings_table

Done = list[tuple[RunTask, RunTables]]


def rank_paths(jobs: Iterable[JobTask]) -> set[str]:
    """The export folders of the ranks of ``jobs`` that are runs of their own (they hold per-task data)."""
    return {str(r.source.root) for t in jobs for r in t.job.ranks if r.has_kernels}


class RankHold:
    """The findings of the batch's job ranks committed before their job was judged, until it is."""

    def __init__(self, jobs: list[JobTask], settings: WorkSettings) -> None:
        self._job_of = {str(r.source.root): t for t in jobs for r in t.job.ranks if r.has_kernels}
        self._waiting: dict[str, tuple[pa.Table, pa.Table]] = {}  # export folder -> its findings and inputs
        self._ready: dict[str, list[dict[str, Any]]] = {}  # export folder -> its job's explanation rows
        self._settings = settings

    def runs(self, done: Done) -> Done:
        """A chunk's runs as they are to be committed now: a job rank whose job is judged explained, one whose
        job is not judged yet as it is (its findings kept here); neither with its EXPLAIN_INPUTS."""
        out = []
        for task, tables in done:
            inputs = tables.pop(EXPLAIN_INPUTS, None)
            path = task.export_path
            if inputs is None or "findings" not in tables or path not in self._job_of:
                out.append((task, tables))
            elif path in self._ready:
                found = self._explained(tables["findings"], inputs, self._ready[path])
                out.append((task, tables if found is None else {**tables, "findings": found}))
            else:
                self._waiting[path] = (tables["findings"], inputs)
                out.append((task, tables))
        return out

    def job(self, task: JobTask, tables: RunTables) -> list[pa.Table]:
        """The findings rows, explained, of the ranks of a judged (or failed) job committed before it, those
        its findings change only: they replace those ranks' rows. Its explanation rows are taken out of
        ``tables``, which holds its catalog rows only then."""
        explains = tables.pop(JOB_EXPLAINS, None)
        rows = explains.to_pylist() if explains is not None else []
        out = []
        for path in sorted(path for path, of in self._job_of.items() if of == task):
            self._ready[path] = [r for r in rows if r["export_path"] == path]
            if path in self._waiting:
                found = self._explained(*self._waiting.pop(path), self._ready[path])
                out += [] if found is None else [found]
        return out

    def _explained(self, findings: pa.Table, inputs: pa.Table, rows: list[dict[str, Any]]) -> pa.Table | None:
        """A rank's findings rows explained by ``rows`` (its job's); None when they explain none of them."""
        if not rows:
            return None
        waits = {r.name: (r.impact_waits, r.polarity) for r in batch_rules(self._settings.rules_dir) if r.impact_waits}
        return explained_table(findings, inputs, rows, waits)


def explained_table(
    findings: pa.Table, inputs: pa.Table, rows: list[dict[str, Any]], waits: dict[str, tuple[str, str]]
) -> pa.Table | None:
    """A rank's findings rows (of each of its runs) with its job's explanation ``rows`` applied, ranked again
    (None: they explain none); ``inputs``: its EXPLAIN_INPUTS; ``waits``: the rank rules' [impact] waits and
    polarity by rule name."""
    basis = {r["run_id"]: (r["steps"], r["span_us"]) for r in inputs.to_pylist()}
    amounts = {(r["run_id"], r["rank"]): r["amount_us"] for r in inputs.to_pylist()}
    by_run: dict[str, list[dict[str, Any]]] = {}
    for row in findings.to_pylist():
        by_run.setdefault(row["run_id"], []).append(row)
    parts, changed = [], False
    for cid, run_rows in by_run.items():
        found = [_finding(row, amounts[cid, row["rank"]]) for row in run_rows]
        explained = explained_findings(found, _explanations(rows, cid, waits), basis[cid])
        changed |= explained is not None
        parts.append(findings_table(cid, explained if explained is not None else found))
    return pa.concat_tables(parts) if changed else None


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


def _finding(row: dict[str, Any], amount_us: float) -> Finding:
    """A finding as its catalog row holds it, with its amount before impacts were shared (what part of it a
    job finding explains is taken off that)."""
    keep = ("rule", "code", "severity", "category", "title", "run_id", "subject", "value", "threshold", "metric")
    rest = ("unit", "impact_us", "span_share", "confidence", "message")
    fields = {k: row[k] for k in (*keep, *rest)}
    finding = Finding(**fields, advice_summary="", advice_steps=())
    return replace(finding, details={"impact_before_overlap_us": amount_us})
