"""The vocabularies are written once (analyzer/vocabulary.py): every tuple of allowed values is read from them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from analyzer.rule_engine.loader import load_rules
from analyzer.rule_engine.validation import CATEGORY_PREFIX, SCOPE_CATEGORY, validate_rule
from analyzer.vocabulary import CATEGORIES, SCOPES, SEVERITIES, member

ROOT = Path(__file__).resolve().parents[1]


def test_category_prefixes_and_scope_categories_use_the_vocabulary():
    assert tuple(CATEGORY_PREFIX) == CATEGORIES
    assert set(SCOPE_CATEGORY) <= set(SCOPES) and set(SCOPE_CATEGORY.values()) <= set(CATEGORIES)


def test_validation_refuses_words_outside_the_vocabularies():
    rule = next(r for r in load_rules(ROOT / "rules") if r.scope == "run")
    assert validate_rule(rule) == []
    bad = dataclasses.replace(rule, scope="pair", severity="fatal", status="beta")
    problems = " | ".join(validate_rule(bad))
    assert "scope 'pair' is not one of run, runs, job, dump, logs" in problems
    assert "severity 'fatal' is not one of info, warning, critical" in problems
    assert "status 'beta' is not one of preview, stable, deprecated" in problems


def test_member_types_a_word_or_refuses_it():
    assert member(SEVERITIES, "critical") == "critical" and member(SEVERITIES, "CRITICAL") is None
