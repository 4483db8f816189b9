"""python -m fixtures.evaluate end to end on a small slice, its usage errors, and the README's generated table."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures.evaluate.__main__ import main
from fixtures.evaluate.readme_section import END, GENERATED, START, SectionError, replace_section, section_text
from fixtures.evaluate.table import PROBLEM_HEAD
from fixtures.generator.ground_truth import load_ground_truth

ROOT = Path(__file__).resolve().parents[1]
SLICE = ["--problems", "mte_family", "healthy", "--models", "llm", "--sizes", "4", "--layouts", "torch_npu"]


@pytest.mark.slow
def test_evaluate_small_slice_prints_both_tables_the_same_way_twice(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SLICE, "--seed", "3", "--markdown"]) == 0
    first = capsys.readouterr().out
    assert main([*SLICE, "--seed", "3", "--markdown"]) == 0
    assert capsys.readouterr().out == first
    lines = first.splitlines()
    assert lines[0] == "Seed 3, batch sizes 4: 2 exports, 2 diagnosed runs."
    assert "| " + " | ".join(PROBLEM_HEAD) + " |" in lines
    assert any(line.startswith("| mte_family | 1 | ") for line in lines)
    assert any(line.startswith("| healthy | 1 | – | ") for line in lines)
    assert any(line.startswith("| mte-share-high | ") for line in lines)


@pytest.mark.slow
def test_evaluate_keep_writes_the_exports_where_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keep = tmp_path / "matrix"
    assert main([*SLICE, "--problems", "healthy", "--keep", str(keep)]) == 0
    assert [p.relative_to(keep).as_posix() for p in keep.glob("*/*/*/*")] == ["healthy/llm/bs4/torch_npu"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--keep", str(ROOT / "reports" / "matrix")], "lies inside the project"),
        (["--sizes", "0"], "at least 1"),
        (["--rules", str(ROOT / "no-such-rules")], "no such rules folder"),
        (["--update-readme", "--sizes", "4"], "shows the whole matrix"),
    ],
)
def test_evaluate_usage_error_exits_2_with_a_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_evaluate_unknown_problem_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--problems", "no_such_problem"])
    assert exc.value.code == 2


def test_replace_section_swaps_only_the_block_between_the_markers() -> None:
    text = f"# T\n\nbefore\n{START}\nold\n{END}\nafter\n"
    new = replace_section(text, section_text("summary", "| a |"), Path("README.md"))
    assert new == f"# T\n\nbefore\n{START}\n{GENERATED}\n\nsummary\n\n| a |\n{END}\nafter\n"
    with pytest.raises(SectionError, match="README.md: needs exactly one"):
        replace_section("no markers", "x", Path("README.md"))


def test_readme_evaluation_section_is_present_and_well_formed() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count(START) == 1 and readme.count(END) == 1
    body = readme[readme.index(START) + len(START) : readme.index(END)].strip().splitlines()
    assert body[0] == GENERATED
    assert body[2].startswith("Seed ")
    table = [line for line in body if line.startswith("|")]
    assert table[0] == "| " + " | ".join(PROBLEM_HEAD) + " |"
    rows = [line.split(" | ")[0].removeprefix("| ") for line in table[2:]]
    assert rows == [*load_ground_truth().problems, "all"]
    assert all(line.count("|") == len(PROBLEM_HEAD) + 1 for line in table)
