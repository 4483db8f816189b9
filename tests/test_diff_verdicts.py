"""diff's verdicts follow from its statistics: beyond noise only with a noise estimate, an interval that
excludes 0 and a rank test that agrees; unchanged only when the interval covers 0; no estimate apart."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.cli import main
from analyzer.diff.compare import diff_runs
from analyzer.diff.model import CHANGED
from analyzer.report.diff_markdown import render_diff_markdown
from analyzer.runs.sources import load_side, memory_catalog
from analyzer.runs.work import WorkSettings
from tests.tiny_exports import MODEL, write_tiny_export

# Whole commands over generated inputs: in the full suite, not the fast loop.
pytestmark = pytest.mark.slow

UPGRADE = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "cann_upgrade"


def _diff(base, new):
    con = memory_catalog()
    b, _ = load_side(con, str(base), WorkSettings(diagnose=False))
    n, _ = load_side(con, str(new), WorkSettings(diagnose=False))
    return diff_runs(con, b, n)


def _consistent(s) -> bool:
    """The verdict a shift states is the one its numbers give."""
    covers = s.ci_low is None or s.ci_high is None or s.ci_low <= 0 <= s.ci_high
    if s.p_value is None:
        return s.verdict == "no noise estimate" and not s.significant
    if s.significant:
        return s.verdict == "beyond noise" and not covers and s.p_value <= 0.05
    return s.verdict == ("unchanged" if covers else "within noise")


def _pairs(tmp_path):
    names = sorted(p.name for p in UPGRADE.iterdir() if p.is_dir())
    before, after, rerun = (UPGRADE / n for n in (names[1], names[0], names[2]))
    yield before, after
    yield before, rerun
    for seed in (3, 11):  # other seeds, sizes and a change of another op type than the example's
        slower = [(t, n, s, d * 1.08 if t == "Relu" else d) for t, n, s, d in MODEL]
        base = write_tiny_export(tmp_path / f"b{seed}", seed=seed, steps=5 + seed % 4)
        yield base, write_tiny_export(tmp_path / f"n{seed}", seed=seed + 1, steps=6, program=slower)


def test_every_verdict_follows_from_its_interval_and_test(tmp_path):
    verdicts = set()
    for base, new in _pairs(tmp_path):
        diff = _diff(base, new)
        shifts = [diff.step, *(t.shift for t in diff.types), *diff.pipe_shares.values()]
        assert all(_consistent(s) for s in shifts), [s for s in shifts if not _consistent(s)]
        for t in diff.types:
            assert t.status not in ("unchanged", "within noise") or t.shift.verdict == t.status
        verdicts |= {s.verdict for s in shifts}
    assert {"beyond noise", "unchanged", "within noise"} <= verdicts  # the pairs exercise each branch


def test_no_noise_estimate_is_its_own_group_never_beyond_noise(tmp_path):
    slower = [(t, n, s, d * 1.5 if t == "Relu" else d) for t, n, s, d in MODEL]
    base = write_tiny_export(tmp_path / "base", seed=1, steps=2)
    new = write_tiny_export(tmp_path / "new", seed=2, steps=2, program=slower)
    diff = _diff(base, new)
    relu = next(t for t in diff.types if t.op_type == "Relu")
    assert relu.shift.rel_change > 0.3 and relu.status == "no noise estimate" and not relu.shift.significant
    assert not [t for t in diff.types if t.status in CHANGED] and diff.step.verdict == "no noise estimate"
    assert diff.regressions(5) == []
    md = render_diff_markdown(diff)
    changed_table, unknown_table = md.split("## Op types with no noise estimate")
    assert "| Relu |" in unknown_table and "| Relu |" not in changed_table.split("## Op types")[1]
    assert "beyond noise" not in md.split("\n## Op types\n")[0]  # the step line says so, too


def test_cli_single_step_pair_exits_0_on_fail_on_regression(tmp_path, capsys):
    slower = [(t, n, s, d * 1.5 if t == "Relu" else d) for t, n, s, d in MODEL]
    base = write_tiny_export(tmp_path / "base", seed=1, steps=1)
    new = write_tiny_export(tmp_path / "new", seed=2, steps=1, program=slower)
    assert main(["diff", str(base), str(new), "--fail-on-regression", "5"]) == 0
    out = "".join(capsys.readouterr())  # the TSV on stdout, the lines about the run on stderr
    assert "no noise estimate" in out and "regressions beyond 5%: none" in out


@pytest.mark.parametrize("name", ["beyond noise", "within noise", "unchanged", "no noise estimate"])
def test_verdicts_are_documented(name):
    doc = (Path(__file__).resolve().parents[1] / "docs" / "diff.md").read_text()
    assert f"**{name}**" in doc
