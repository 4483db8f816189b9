"""No code under analyzer/ names a built-in rule: a rule's name and id belong in its rules/*.toml only."""

from __future__ import annotations

import io
import re
import tokenize

import pytest

from analyzer.rule_engine.loader import default_rules_dir, load_rules
from tests.conftest import ROOT


def _rule_words() -> set[str]:
    rules = load_rules(default_rules_dir())
    return {r.name for r in rules} | {r.id for r in rules}


def _code_text(source: str) -> str:
    """The source without its comments: strings (docstrings included), names and operators."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return " ".join(t.string for t in tokens if t.type != tokenize.COMMENT)


@pytest.mark.slow
def test_no_builtin_rule_name_or_id_in_analyzer_code():
    words = _rule_words()
    assert len(words) > 20  # the built-in rules were found: names and ids
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(words))) + r")(?![\w-])")
    found = []
    for path in sorted((ROOT / "analyzer").rglob("*")):
        if path.suffix == ".py":
            text = _code_text(path.read_text(encoding="utf-8"))
        elif path.suffix == ".sql":
            text = path.read_text(encoding="utf-8")
        else:
            continue
        found += [f"{path.relative_to(ROOT)}: {m.group(1)}" for m in pattern.finditer(text)]
    assert found == []


def test_the_check_sees_a_rule_name_in_a_string_but_not_in_a_comment():
    name = sorted(_rule_words())[0]
    assert name in _code_text(f'RULE = "{name}"\n')
    assert name not in _code_text(f"# {name}\nx = 1\n")
