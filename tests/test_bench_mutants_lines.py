"""Every hand-made mutant of bench/ still names a line the code holds, so `python -m bench.mutants` can make it."""

from __future__ import annotations

import pytest

from bench.mutants import MUTANTS, ROOT, load_mutants, mutate_text

FILES = [MUTANTS, MUTANTS.with_name("mutants_rule_edges.toml")]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_mutants_original_line_is_in_its_file_and_the_mutant_changes_it(path) -> None:
    for m in load_mutants(path):
        text = (ROOT / m.file).read_text(encoding="utf-8")
        assert mutate_text(text, m) != text, m.id
