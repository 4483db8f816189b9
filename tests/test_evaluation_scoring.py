"""The evaluation's numbers: recall, precision and 'right first' on a hand-made ground truth with a known outcome."""

from __future__ import annotations

from fixtures.evaluate.diagnosed import Seen
from fixtures.evaluate.scoring import RunResult, Score, by_problem, by_rule
from fixtures.evaluate.table import PROBLEM_HEAD, problem_rows, render, rule_rows
from fixtures.generator.ground_truth import Expectation

MTE = Expectation("mte", expect=("rule-a",), subject=("Conv2D", "224"), first=True)
GAP = Expectation("gap", expect=("rule-b", "rule-c"), subject=(), first=True, tolerate=("rule-d",))
OK = Expectation("healthy", expect=(), subject=(), first=False)


def _seen(*findings: tuple[str, str, str]) -> tuple[Seen, ...]:
    return tuple(Seen(i, rule, severity, subject) for i, (rule, severity, subject) in enumerate(findings))


RUNS = [
    # found and first; an info finding never counts
    RunResult("mte/1", "r1", MTE, _seen(("rule-a", "warning", "Conv2D 8,3,224,224"), ("rule-x", "info", "Relu"))),
    # the type without the family: rule-a warns with the wrong subject; a false warning ranks first
    RunResult("mte/2", "r2", MTE, _seen(("rule-x", "warning", "Relu"), ("rule-a", "warning", "Conv2D"))),
    # found by the second of two accepted rules, not first; the tolerated rule-d is neither right nor false
    RunResult("gap/1", "r3", GAP, _seen(("rule-d", "critical", "device 0"), ("rule-c", "warning", "device 0"))),
    # found by both accepted rules, first
    RunResult("gap/2", "r4", GAP, _seen(("rule-b", "critical", "device"), ("rule-c", "warning", "device"))),
    # a healthy run: one false warning; another with nothing
    RunResult("ok/1", "r5", OK, _seen(("rule-x", "warning", "Add"), ("rule-y", "info", "Add"))),
    RunResult("ok/2", "r6", OK, ()),
]


def test_scores_by_problem_match_the_hand_count() -> None:
    scores = by_problem(RUNS)
    assert list(scores) == ["mte", "gap", "healthy"]
    assert scores["mte"] == Score(
        runs=2, expected=2, found=1, warnings=3, right=1, false=2, wrong_subject=1, first_expected=2, first_right=1
    )
    assert scores["gap"] == Score(
        runs=2, expected=2, found=2, warnings=4, right=3, false=0, wrong_subject=0, first_expected=2, first_right=1
    )
    assert scores["healthy"] == Score(runs=2, warnings=1, false=1)


def test_scores_by_rule_match_the_hand_count() -> None:
    scores = by_rule(RUNS)
    assert list(scores) == ["rule-a", "rule-b", "rule-c", "rule-d", "rule-x"]
    assert scores["rule-a"] == Score(
        runs=6, expected=2, found=1, warnings=2, right=1, false=1, wrong_subject=1, first_expected=2, first_right=1
    )
    # rule-b found one of its two runs but ranked first there; rule-c found both and was never first
    assert scores["rule-b"] == Score(runs=6, expected=2, found=1, warnings=1, right=1, first_expected=2, first_right=1)
    assert scores["rule-c"] == Score(runs=6, expected=2, found=2, warnings=2, right=2, first_expected=2)
    assert scores["rule-d"] == Score(runs=6, warnings=1)
    assert scores["rule-x"] == Score(runs=6, warnings=2, false=2)


def test_table_shows_the_ratios_in_a_fixed_format() -> None:
    rows = problem_rows(by_problem(RUNS))
    assert rows[0] == ("mte", "2", "1/2 50%", "1/3 33%", "1/2 50%", "2", "1")
    assert rows[2] == ("healthy", "2", "–", "0/1 0%", "–", "1", "0")
    assert rows[-1] == ("all", "6", "3/4 75%", "4/7 57%", "2/4 50%", "3", "1")
    assert rule_rows(by_rule(RUNS))[3] == ("rule-d", "–", "–", "–", "0", "0")
    text = render(PROBLEM_HEAD, rows, markdown=True).splitlines()
    assert text[0] == "| problem | runs | recall | precision | right first | false warnings | wrong subject |"
    assert text[1] == "|---|---:|---:|---:|---:|---:|---:|"
    assert len(text) == 2 + len(rows)
