"""`npu-triage accuracy DUMP REFERENCE`: compare a dump with its reference, run the accuracy rules, write reports."""

from __future__ import annotations

import argparse
from pathlib import Path

from analyzer.atomic_files import write_text_atomically
from analyzer.cli.console import err, out
from analyzer.cli.output_paths import CATALOG, FOLDER, Output, ReadFolder, check_outputs
from analyzer.cli.partial_input import add_allow_partial, partial_input_code
from analyzer.cli.report_options import add_report_options, add_self_contained, report_formats
from analyzer.cli.rule_options import add_rule_options, load_checked_rules, rule_overrides
from analyzer.cli.usage import UsageError
from analyzer.errors import TriageError
from analyzer.execution.threads import thread_count
from analyzer.report.output_files import run_folder
from analyzer.rule_engine.model import SEVERITY_RANK, ConfiguredRules
from analyzer.rule_engine.params import ParamError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "accuracy",
        help="compare an accuracy dump with its reference and name the first operator that computes wrong",
        description="Compare every tensor of an Ascend accuracy dump (native adump files, .npy) with a reference "
        "(a folder of .npy/.pt tensors or a second dump), run the accuracy rules and write the ranked findings.",
    )
    p.add_argument("dump", type=Path, help="the dump path as configured, or any folder below it")
    p.add_argument("reference", type=Path, help="a folder of reference tensors (.npy, .pt) or a second dump folder")
    p.add_argument("--profile", type=Path, help="a profile export of the same run: device time beside each operator")
    add_report_options(p)
    add_self_contained(p)
    p.add_argument("--catalog", type=Path, help="also keep the comparison's tables and findings in this catalog file")
    p.add_argument(
        "--run-id",
        help="the comparison's run id: its report folder under --out and its rows in --catalog, which replace the "
        "rows of the same run id (default: the dump folder's name)",
    )
    add_allow_partial(p, "the reports")
    add_rule_options(p)
    p.set_defaults(func=run)


def _check(args: argparse.Namespace) -> list[str]:
    """Every user mistake before any work: inputs that are not there, outputs that must not be written."""
    formats = report_formats(args.format)
    if args.run_id is not None and not args.run_id.strip(" ./"):
        raise UsageError(f"--run-id {args.run_id!r}: give a name (letters, digits, '.', '_', '-', '/')")
    for name, path in (("DUMP", args.dump), ("REFERENCE", args.reference), ("--profile", args.profile)):
        if path is not None and not path.exists():
            raise UsageError(f"{name} {path}: no such file or folder")
    inputs = [ReadFolder(p.parent if p.is_file() else p) for p in (args.dump, args.reference, args.profile) if p]
    outputs = [Output("--out", args.out, FOLDER)]
    outputs += [Output("--catalog", args.catalog, CATALOG)] if args.catalog else []
    check_outputs(outputs, inputs)
    return formats


def run(args: argparse.Namespace) -> int:
    try:
        formats = _check(args)
        rules = [r for r in load_checked_rules(args.rules) if r.scope == "dump"]
        configured = ConfiguredRules(tuple(rules), rule_overrides(args, rules), args.preview)
        threads = thread_count(getattr(args, "threads", None))
    except (UsageError, ParamError, ValueError) as exc:
        err(f"npu-triage: {exc}")
        return 2
    # numpy, protobuf and the readers load only here
    from analyzer.accuracy.pipeline import run_accuracy

    report = run_accuracy(args.dump, args.reference, configured, args.profile, threads, args.run_id)
    for p in report.problems:
        err(p.line())
    if not report.counts["compared"] and not report.counts["stats_rows"]:
        err("npu-triage: nothing could be compared: no dump tensor has a reference tensor (problems above)")
        return 2
    try:
        written = _write(report, run_folder(args.out, report.run_id), formats, args.self_contained)
        if args.catalog:
            _keep(report, args.catalog)
            written.append(args.catalog)
    except (TriageError, ValueError) as exc:  # an output, or the catalog, could not be written
        err(f"npu-triage: {exc}")
        return 2
    _print(report, written)
    _older_run_reports(report, args.out)
    return _exit_code(report, args)


def _write(report, folder: Path, formats: list[str], self_contained: bool = False) -> list[Path]:
    import json

    from analyzer.accuracy.report.html_page import render_html
    from analyzer.accuracy.report.json_doc import accuracy_json
    from analyzer.accuracy.report.markdown import render_markdown
    from analyzer.report.plotly_asset import plotly_src, write_plotly_js

    written = []
    if "json" in formats:
        text = json.dumps(accuracy_json(report), indent=2, sort_keys=True) + "\n"
        written.append(write_text_atomically(folder / "accuracy.json", text))
    if "md" in formats:
        written.append(write_text_atomically(folder / "accuracy.md", render_markdown(report)))
    if "html" in formats:
        page = folder / "accuracy.html"
        src = None if self_contained else plotly_src(page, write_plotly_js(folder))
        written.append(write_text_atomically(page, render_html(report, src)))
    return written


def _keep(report, catalog: Path) -> None:
    """The tables and findings into the catalog (a CatalogError when it cannot be one)."""
    from analyzer.accuracy.catalog_store import store_in_catalog

    store_in_catalog(report.con, report.run_id, catalog)


def _print(report, written: list[Path]) -> None:
    c = report.counts
    out.print(
        f"{report.run_id}: {c['compared']} tensor pair(s) compared, {c['unpaired']} unpaired, "
        f"{len(report.findings)} finding(s)",
        markup=False,
    )
    for n, f in enumerate(report.findings, 1):
        out.print(f"{n}. [{f.code}] {f.severity}: {f.message}", markup=False)
    for path in written:
        out.print(f"wrote {path}", markup=False)


def _older_run_reports(report, out_dir: Path) -> None:
    """The profile's run reports already under --out link to this report only once diagnose writes them again."""
    for run_id in (report.profile or {}).get("run_ids", []):
        older = [p for p in (run_folder(out_dir, run_id) / n for n in ("diagnosis.md", "report.html")) if p.is_file()]
        if older:
            out.print(f"{older[0].parent} holds the run report of {run_id} from before: `npu-triage diagnose` "
                      f"with --out {out_dir} again links it to this accuracy report", markup=False)  # fmt: skip


def _exit_code(report, args: argparse.Namespace) -> int:
    if args.fail_on:
        tripped = [f for f in report.findings if SEVERITY_RANK[f.severity] >= SEVERITY_RANK[args.fail_on]]
        if tripped:
            f = tripped[0]
            more = f" and {len(tripped) - 1} more" if len(tripped) > 1 else ""
            err(f"npu-triage: --fail-on {args.fail_on}: tripped by {f.severity} {f.code} {f.rule} ({f.subject}){more}")
            return 1
    return partial_input_code(report.problems, args.allow_partial, "the comparison covers")
