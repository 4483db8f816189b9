"""The README is for users: it stays under 1,800 words (detail goes to docs/)."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_stays_under_1800_words():
    words = len(README.read_text(encoding="utf-8").split())
    assert words < 1800, f"README.md has {words} words; move detail to docs/"
