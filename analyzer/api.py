"""The library API: load an export, diagnose it, write its reports; the command line calls these.

>>> import analyzer
>>> trace = analyzer.load("fixtures/examples/resnet_host_sync")          # doctest: +SKIP
>>> d = analyzer.diagnose(trace)                                           # doctest: +SKIP
>>> analyzer.findings_table(d).to_pandas()                                 # doctest: +SKIP
>>> analyzer.report(d, "reports/", trace=trace)                           # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from analyzer.atomic_files import write_text_atomically
from analyzer.diagnosis import diagnose as diagnose_run
from analyzer.diagnosis import diagnose_runs
from analyzer.diagnosis_model import Diagnosis
from analyzer.errors import TriageError
from analyzer.execution.memory import memory_limit_bytes
from analyzer.ingest.database import connect, load_duckdb
from analyzer.ingest.loader import load_export, usable_run_ids
from analyzer.ingest.model import ExportSource, Problem
from analyzer.ingest.schema import TABLES
from analyzer.report.accuracy_links import accuracy_links
from analyzer.report.json_export import render_json
from analyzer.report.markdown import render_markdown
from analyzer.report.output_files import run_folder
from analyzer.rule_engine.loader import default_rules_dir, load_rules
from analyzer.rule_engine.model import ConfiguredRules, Rule
from analyzer.rule_engine.params import check_overrides
from analyzer.rule_engine.validation import validate_rules

if TYPE_CHECKING:  # pyarrow and polars load when a table is asked for, not with every command
    import polars as pl
    import pyarrow as pa

FORMATS = ("json", "md", "html")


class RuleSetError(TriageError, ValueError):
    """A rules folder that cannot be used: missing, empty, or with invalid rule files (all listed)."""


@dataclass
class Trace:
    """One or more exports read into DuckDB: the normalized tables (``docs/schema.md``), the runs
    found and the problems met. ``query`` and ``table`` return Arrow tables; ``con`` is the DuckDB
    connection itself."""

    con: duckdb.DuckDBPyConnection
    run_ids: list[str]
    problems: list[Problem] = field(default_factory=list)
    sources: list[ExportSource] = field(default_factory=list)

    def query(self, sql: str, params: object = None) -> pa.Table:
        """The rows of a SQL query over the normalized tables (and the helper views, once diagnosed)."""
        return self.con.sql(sql, params=params).to_arrow_table()

    def table(self, name: str) -> pl.DataFrame:
        """A normalized table (``ops``, ``timeline``, ``steps``, ...) as a polars DataFrame."""
        if name not in TABLES:
            raise KeyError(f"no normalized table {name!r}; known: {', '.join(TABLES)}")
        return self.con.sql(f"SELECT * FROM {name}").pl()

    def usable_run_ids(self) -> list[str]:
        """The runs with at least one timed device task (what a diagnosis needs)."""
        return usable_run_ids(self.con, self.run_ids)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load(path: Path | str, *, memory_limit: str | None = None, left_out_kinds: frozenset[str] = frozenset()) -> Trace:
    """Read every export under ``path`` (an export folder or a folder above several).

    Args:
        path: the export folder.
        memory_limit: DuckDB's memory limit such as '2GB' (default: ``execution/memory.py``).
        left_out_kinds: timeline event kinds not to store (a caller that never reads them).

    Raises IngestError when nothing readable is there; problems with single files are listed in
    ``Trace.problems`` instead."""
    con = connect(memory_limit_bytes(memory_limit))
    ingested = load_export(path, con=con, left_out_kinds=left_out_kinds)
    return Trace(con, ingested.run_ids, ingested.problems, ingested.sources)


def open_database(db_path: Path | str, *, memory_limit: str | None = None) -> Trace:
    """A Trace over the tables of a DuckDB file written by ``npu-triage ingest --db`` (only read)."""
    con = load_duckdb(Path(db_path), memory_limit_bytes(memory_limit))
    run_ids = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
    return Trace(con, run_ids)


def rules(rules_dir: Path | str | None = None) -> list[Rule]:
    """The rules of a folder (default: the built-in rules), validated; RuleSetError lists every problem."""
    folder = Path(rules_dir) if rules_dir is not None else default_rules_dir()
    if not folder.is_dir():
        raise RuleSetError(f"{folder}: no such rules folder")
    loaded = load_rules(folder)
    problems = validate_rules(loaded)
    if problems:
        lines = [f"{path}: {p}" for path, ps in problems.items() for p in ps]
        raise RuleSetError("invalid rule files (see `npu-triage rules check`):\n" + "\n".join(lines))
    if not loaded:
        raise RuleSetError(f"{folder}: holds no rule files (<category>/<rule-name>.toml)")
    return loaded


def diagnose(
    trace: Trace,
    run_id: str | None = None,
    *,
    rule_set: list[Rule] | None = None,
    params: dict[str, dict[str, Any]] | None = None,
    preview: bool = False,
) -> Diagnosis:
    """The ranked diagnosis of one run (``run_id``, or the only usable run of the trace).

    Args:
        trace: what ``load`` returned.
        run_id: the run to judge; needed when the trace holds several usable runs.
        rule_set: rules to run (default: the built-in rules).
        params: overrides, rule name (or code) -> {param: value}.
        preview: also run rules whose status is 'preview'.
    """
    usable = trace.usable_run_ids()
    if run_id is None:
        if len(usable) != 1:
            raise ValueError(f"name one run_id of the {len(usable)} usable runs: {', '.join(usable) or 'none'}")
        run_id = usable[0]
    elif run_id not in usable:  # an empty diagnosis of a run that is not there would read as a clean run
        raise ValueError(f"no usable run {run_id!r} in the trace; its usable runs: {', '.join(usable) or 'none'}")
    return diagnose_run(trace.con, run_id, _configured(rule_set, params, preview))


def _configured(rule_set: list[Rule] | None, params: dict | None, preview: bool) -> ConfiguredRules:
    """The rules with ``params`` checked as the command line checks --set and --config (ParamError names an
    unknown rule or param, a value of another kind, None, NaN)."""
    chosen = list(rule_set or rules())
    return ConfiguredRules(tuple(chosen), check_overrides(dict(params or {}), chosen), preview)


def diagnose_all(
    trace: Trace,
    *,
    rule_set: list[Rule] | None = None,
    params: dict[str, dict[str, Any]] | None = None,
    preview: bool = False,
    on_run: Callable[[str], None] | None = None,
) -> list[Diagnosis]:
    """The diagnosis of every usable run, then (with several runs) that of the rules comparing them.
    ``on_run``: called with each run id as its diagnosis starts (a command's progress display)."""
    configured = _configured(rule_set, params, preview)
    usable = trace.usable_run_ids()
    found = []
    for r in usable:
        if on_run:
            on_run(r)
        found.append(diagnose_run(trace.con, r, configured))
    several = diagnose_runs(trace.con, usable, configured)
    return found if several is None else [*found, several]


def findings_table(diagnosis: Diagnosis) -> pa.Table:
    """The ranked findings as an Arrow table, one row each (evidence and advice steps left out)."""
    import pyarrow  # loads only when a table is asked for (the commands never ask)

    skip = {"evidence", "evidence_columns", "details", "advice_steps"}
    rows = [{k: v for k, v in asdict(f).items() if k not in skip} for f in diagnosis.findings]
    if not rows:
        return pyarrow.table({"rule": pyarrow.array([], pyarrow.string())})
    return pyarrow.Table.from_pylist(rows)


def report(
    diagnosis: Diagnosis,
    out_dir: Path | str,
    formats: Iterable[str] = ("json", "md"),
    *,
    trace: Trace | None = None,
    self_contained: bool = False,
) -> list[Path]:
    """Write the diagnosis into ``out_dir``/<run id>/ (diagnosis.json, diagnosis.md, report.html),
    each file atomically; returns the paths written. HTML needs the ``trace`` (its charts query it); its
    plotly.js is one file shared by the pages of ``out_dir``, or inside the page with ``self_contained``.
    Accuracy reports under ``out_dir`` whose --profile holds this run get a link and notes (Markdown, HTML)."""
    formats = list(formats)
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"unknown report formats {unknown}; choose from {', '.join(FORMATS)}")
    if "html" in formats and trace is None:  # said before any file is written
        raise ValueError("the HTML report needs the trace its charts query: report(..., trace=trace)")
    folder = run_folder(Path(out_dir), diagnosis.run_id)
    # accuracy reports already written under out_dir for this run (accuracy --profile) get a link and notes
    diagnosis = replace(diagnosis, accuracy_links=accuracy_links(Path(out_dir), diagnosis.run_id, folder))
    written = []
    if "json" in formats:
        written.append(write_text_atomically(folder / "diagnosis.json", render_json(diagnosis)))
    if "md" in formats:
        written.append(write_text_atomically(folder / "diagnosis.md", render_markdown(diagnosis)))
    if "html" in formats and trace is not None:  # (None was refused above)
        from analyzer.report.html import write_html  # plotly loads only when HTML is asked for

        # plotly.js once per output folder, beside the reports, not inlined into every page (unless asked)
        shared = None if self_contained else Path(out_dir)
        written.append(write_html(diagnosis, trace.con, folder / "report.html", shared_js=shared))
    return written
