"""A batch's job ranks wait for their job's explanations, then their findings read as `diagnose` writes them.

A batch judges a job's ranks in run chunks and the job in a job chunk, in any order. A rank's tables
are held in the driver until its job is judged; then the job findings' [explains] (their rows as the
job's worker sent them, ``job_catalog.JOB_EXPLAINS``) are applied by ``job/explained.py`` to the
rank's findings, rebuilt from its catalog rows and ``work.EXPLAIN_INPUTS``, before it is committed.
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
    """The ranks of the batch's jobs, each held until its job's explanations are in (or its job failed)."""

    def __init__(self, jobs: list[JobTask], settings: WorkSettings) -> None:
        self._job_of = {str(r.source.root): t for t in jobs for r in t.job.ranks if r.has_kernels}
        self._held: dict[str, tuple[RunTask, RunTables]] = {}
        self._ready: dict[str, list[dict[str, Any]]] = {}  # export folder -> its job's explanation rows
        self._settings = settings

    def runs(self, done: Done) -> Done:
        """Of a chunk's runs, those to commit now (a job rank whose job is judged: explained); the ranks of jobs
        not judged yet are held."""
        out = []
        for task, tables in done:
            path = task.export_path
            if path not in self._job_of:
                out.append((task, tables))
            elif path in self._ready:
                out.append((task, self._explained(tables, self._ready[path])))
            else:
                self._held[path] = (task, tables)
        return out

    def job(self, task: JobTask, tables: RunTables) -> Done:
        """The held ranks of a judged (or failed) job, explained, to commit now; its explanation rows are taken
        out of ``tables``, which holds its catalog rows only then."""
        explains = tables.pop(JOB_EXPLAINS, None)
        rows = explains.to_pylist() if explains is not None else []
        mine = [path for path, of in self._job_of.items() if of == task]
        out = []
        for path in sorted(mine):
            self._ready[path] = [r for r in rows if r["export_path"] == path]
            if path in self._held:
                held_task, held_tables = self._held.pop(path)
                out.append((held_task, self._explained(held_tables, self._ready[path])))
        return out

    def rest(self) -> Done:
        """The ranks still held (their job lost before it was judged): as they were judged, unexplained."""
        out = [(task, self._explained(tables, [])) for task, tables in self._held.values()]
        self._held.clear()
        return sorted(out, key=lambda d: d[0].label)

    def _explained(self, tables: RunTables, rows: list[dict[str, Any]]) -> RunTables:
        """The rank's tables with its findings explained by ``rows`` (its job's), without EXPLAIN_INPUTS."""
        inputs = tables.pop(EXPLAIN_INPUTS, None)
        if not rows or inputs is None or "findings" not in tables:
            return tables
        waits = {r.name: (r.impact_waits, r.polarity) for r in batch_rules(self._settings.rules_dir) if r.impact_waits}
        return {**tables, "findings": explained_table(tables["findings"], inputs, rows, waits)}


def explained_table(
    findings: pa.Table, inputs: pa.Table, rows: list[dict[str, Any]], waits: dict[str, tuple[str, str]]
) -> pa.Table:
    """A rank's findings rows (of each of its runs) with its job's explanation ``rows`` applied, ranked again;
    ``inputs``: its EXPLAIN_INPUTS; ``waits``: the rank rules' [impact] waits and polarity by rule name."""
    basis = {r["run_id"]: (r["steps"], r["span_us"]) for r in inputs.to_pylist()}
    amounts = {(r["run_id"], r["rank"]): r["amount_us"] for r in inputs.to_pylist()}
    by_run: dict[str, list[dict[str, Any]]] = {}
    for row in findings.to_pylist():
        by_run.setdefault(row["run_id"], []).append(row)
    parts = []
    for cid, run_rows in by_run.items():
        found = [_finding(row, amounts[cid, row["rank"]]) for row in run_rows]
        explained = explained_findings(found, _explanations(rows, cid, waits), basis[cid])
        parts.append(findings_table(cid, explained if explained is not None else found))
    return pa.concat_tables(parts) if parts else findings


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
