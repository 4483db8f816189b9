"""`npu-triage rules list|show|check`: the rule reference, generated from the files, and checks."""

from __future__ import annotations

import argparse
from pathlib import Path

from analyzer.cli.console import err, out
from analyzer.cli.rule_options import load_checked_rules
from analyzer.report.rules_doc import render_rule_page, render_rules_list, render_rules_markdown, render_rules_reference
from analyzer.rule_engine.checks import check_rules_folder
from analyzer.rule_engine.loader import default_rules_dir, rule_files


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="list, show or check the rules")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    ls = actions.add_parser("list", help="every rule, one line each")
    shape = ls.add_mutually_exclusive_group()
    shape.add_argument("--markdown", action="store_true", help="Markdown table (the README's rules section)")
    shape.add_argument("--reference", action="store_true", help="the full reference in Markdown (docs/rules.md)")
    show = actions.add_parser("show", help="the documentation of one rule")
    show.add_argument("name", help="rule name or code, as `rules list` prints them")
    check = actions.add_parser("check", help="validate every rule file (exit 1 on problems)")
    check.add_argument(
        "--fixtures",
        type=Path,
        help="rule fixtures folder (default: fixtures/rules beside the rules)",
    )
    for q in (ls, show, check):
        q.add_argument("--rules", type=Path, help="rules folder (default: the built-in rules)")
    p.set_defaults(func=run)


def _check(args: argparse.Namespace) -> int:
    folder = args.rules or default_rules_dir()
    if not folder.is_dir():
        err(f"npu-triage: {folder}: no such rules folder")
        return 2
    fixtures = args.fixtures or folder.parent / "fixtures" / "rules"
    problems = check_rules_folder(folder, fixtures if fixtures.is_dir() else None)
    for path, found in problems.items():
        for problem in found:
            out.print(f"{path}: {problem}", markup=False)
    count = len(rule_files(folder))
    out.print(f"{count} rule file(s) checked, {sum(map(len, problems.values()))} problem(s)", markup=False)
    return 1 if problems else 0


def run(args: argparse.Namespace) -> int:
    if args.action == "check":
        return _check(args)
    rules = load_checked_rules(args.rules)
    if args.action == "list":
        out.print(
            render_rules_reference(rules)
            if args.reference
            else render_rules_markdown(rules)
            if args.markdown
            else render_rules_list(rules),
            markup=False,
            end="",
        )
        return 0
    match = [r for r in rules if args.name in (r.name, r.id)]
    if not match:
        err(f"npu-triage: no rule {args.name!r}; rules: {', '.join(sorted(r.name for r in rules))}")
        return 2
    out.print(render_rule_page(match[0]), markup=False, end="")
    return 0
