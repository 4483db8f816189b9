"""The README rules section equals `npu-triage rules list --markdown` over the rule files."""

from __future__ import annotations

from pathlib import Path

from analyzer.report.rules_doc import render_rules_markdown, render_rules_reference
from analyzer.rule_engine.loader import load_rules

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- rules:start -->\n", "<!-- rules:end -->"


def test_readme_rules_section_matches_rule_files() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert START in text and END in text, f"README.md lacks the markers {START.strip()} / {END}"
    section = text.split(START, 1)[1].split(END, 1)[0]
    expected = render_rules_markdown(load_rules(ROOT / "rules"))
    assert section == expected, (
        "README.md's rules section is stale; regenerate it: replace the text between "
        f"{START.strip()} and {END} with the output of `npu-triage rules list --markdown`"
    )


def test_docs_rules_page_matches_rule_files() -> None:
    page = ROOT / "docs" / "rules.md"
    assert page.read_text(encoding="utf-8") == render_rules_reference(load_rules(ROOT / "rules")), (
        "docs/rules.md is stale; regenerate it: npu-triage rules list --reference > docs/rules.md"
    )
