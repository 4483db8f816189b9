"""Terminal tables at 80 and 120 columns: no word of a findings table or of the many-runs overview is split
across lines (a word too long ends in an ellipsis), and the overview holds one line per run."""

from __future__ import annotations

import io
import re
from dataclasses import replace

import pytest
from rich.console import Console

from analyzer.api import diagnose_all, load
from analyzer.report.terminal import findings_table, print_overview
from tests.tiny_exports import write_tiny_export

LONG_SUBJECT = "MatMulV2 " + ";".join(f"{n},{n * 2},{n * 4}" for n in range(64, 84))  # a 120-character shape string
BOX = re.compile(r"[\u2500-\u257f]")  # rich's box-drawing characters


@pytest.fixture(scope="module")
def diagnoses(tmp_path_factory):
    """Real diagnoses of three tiny runs; the first given findings with long subjects and a long rule name."""
    root = tmp_path_factory.mktemp("tree")
    for i in range(3):
        # PROF_ folder names as msprof writes them, differing only in their middle
        write_tiny_export(root / f"group_{i}" / f"PROF_000001_2026082316532{i}062_00625538CIGQAHCJ", seed=i, steps=3)
    found = diagnose_all(load(root))
    top = found[0].findings[0]
    many = [
        replace(top, subject=LONG_SUBJECT, rule="a-rule-name-longer-than-its-column-can-hold"),
        replace(top, subject="Add_2 with words that wrap at spaces and never inside them"),
        top,
    ]
    return [replace(found[0], findings=tuple(many)), *found[1:]]


def _render(renderable_or_print, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None, legacy_windows=False)
    if callable(renderable_or_print):
        renderable_or_print(console)
    else:
        console.print(renderable_or_print)
    return console.file.getvalue()


def _unsplit(text: str, words: set[str]) -> list[str]:
    """The printed tokens that are neither a whole word of the input nor a word cut with an ellipsis."""
    bad = []
    for token in BOX.sub(" ", text).split():
        head, _, tail = token.partition("…")
        whole = token in words
        cut = "…" in token and any(w.startswith(head) and w.endswith(tail) and len(w) >= len(token) for w in words)
        if not (whole or cut):
            bad.append(token)
    return bad


def _words(*texts: str) -> set[str]:
    return {w for t in texts for w in t.split()}


@pytest.mark.parametrize("width", [80, 120])
def test_findings_table_never_splits_a_word(diagnoses, width):
    d = diagnoses[0]
    text = _render(findings_table(d), width)
    cells = [f"{f.severity} {f.code} {f.subject} {f.impact_us:,.1f} {f.rule}" for f in d.findings]
    shares = [f"{f.span_share:.1%}" for f in d.findings if f.span_share is not None]
    header = "# severity code subject impact us of span rule finding(s), by recoverable device time"
    words = _words(*cells, *shares, header, d.run_id + ":", str(len(d.findings)), "1 2 3")
    assert max(len(line) for line in text.splitlines()) <= width
    assert _unsplit(text, words) == [], text
    assert LONG_SUBJECT.split()[1][:8] in text  # the long word is shown, cut, not dropped


@pytest.mark.parametrize("width", [80, 120])
def test_overview_is_one_line_per_run_and_splits_no_word(diagnoses, width):
    text = _render(lambda console: print_overview(diagnoses, console), width)
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("run "))
    rows = lines[header + 1 : header + 1 + len(diagnoses)]
    assert lines[header + 1 + len(diagnoses)].startswith("skipped:")  # one line per run, nothing more
    ids = [row.split()[0] for row in rows]
    assert len(set(ids)) == len(diagnoses)  # cut in their middle, still told apart
    for d, row, shown in zip(diagnoses, rows, ids, strict=True):
        head, _, tail = shown.partition("…")
        assert d.run_id.startswith(head) and d.run_id.endswith(tail)
        assert f"{d.summary.span_us:,.1f}" in row and f"{d.summary.computing_pct:.1f}%" in row
        assert f"{d.findings[0].impact_us:,.1f}" in row
    assert max(len(line) for line in lines[header : header + 1 + len(diagnoses)]) <= width
    words = _words(
        *(f"{d.run_id} {d.findings[0].severity} {d.findings[0].code} {d.findings[0].title}" for d in diagnoses)
    )
    plain = _render(lambda console: print_overview(diagnoses, console), 400)
    assert _unsplit("\n".join(lines[header : header + 1 + len(diagnoses)]), words | _words(plain)) == [], text


@pytest.mark.parametrize("width", [80, 120])
def test_query_rows_table_splits_no_word(width):
    import pyarrow as pa

    from analyzer.report.rows import rows_rich

    paths = [f"/data/exports/experiment_{i}/PROF_000001_20240101_rank{i}/mindstudio_profiler_output" for i in range(3)]
    columns = {
        "run_id": [f"group_{i}/run_{i:02d}" for i in range(3)],
        "source_path": paths,
        "step_time_p50_us": [123456.789, 2345.5, 98765.4321],
        "model_name": ["a model with a name of several words", "llama", "qwen"],
        "cann_version": ["8.0.RC1", "8.0.RC2", "7.0.0"],
    }
    table = pa.table(columns)
    text = _render(rows_rich(table, title="rows"), width)
    plain = _render(rows_rich(table, title="rows"), 400)  # every cell on one line: its words are the reference
    assert _unsplit(text, _words(plain)) == [], text
    assert max(len(line) for line in text.splitlines()) <= width


def test_sweep_table_splits_no_word_at_80_columns():
    from analyzer.metrics.sweep import scaling_tables
    from analyzer.report.sweep_terminal import sweep_table
    from tests.test_runs_sweep import _catalog_with

    rows, _ = scaling_tables(_catalog_with([("a-model-name-of-some-length", 1, 0.2, 1000.0), ("m", 8, 0.5, 1600.0)]))
    shown = rows.drop_columns(["run_id"])
    text = _render(sweep_table(shown), 80)
    plain = _render(sweep_table(shown), 400)  # wide enough for every cell on one line: its words are the reference
    assert _unsplit(text, _words(plain)) == [], text
