"""Make each hand-made one-line bug of bench/mutants.toml in a temporary copy of the repo and run its tests.

python -m bench.mutants                 # the tests pass unmutated, then every mutant: killed / survived
python -m bench.mutants I07 S12         # only these ids (--no-baseline: skip the unmutated run)
python -m bench.mutants --list          # the mutants, without running anything
python -m bench.mutants --check         # every original line is found exactly once (no tests run)
python -m bench.mutants S09 --tests "tests/test_rule_cases.py -k 'mte and not threshold'"   # do these alone?

A mutant is located by the content of its original line (leading and trailing blanks ignored), not by
its number, so it survives edits above it; the recorded line number only breaks a tie between equal
lines. The repo itself is never changed: each mutant gets a fresh copy of the tracked and untracked
(not ignored) files, with ../shared (the real exports) linked beside it, and its tests run there with
that copy first on the import path. Not a test of the suite: it runs pytest once per mutant (minutes
in all).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = Path(__file__).with_name("mutants.toml")


@dataclass(frozen=True)
class Mutant:
    """One one-line bug: where it goes, what it changes and the tests that should fail with it."""

    id: str
    area: str
    file: str
    original: str
    mutated: str
    tests: tuple[str, ...]
    line: int = 0
    bug: str = ""


class MutantError(Exception):
    """A mutant whose original line is not in its file (once), or a mutants file that is malformed."""


def load_mutants(path: Path = MUTANTS) -> list[Mutant]:
    """The mutants of ``path``, in file order."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for row in data["mutant"]:
        out.append(Mutant(**{**row, "tests": tuple(row["tests"])}))
    if len({m.id for m in out}) != len(out):
        raise MutantError(f"{path}: two mutants share an id")
    return out


def mutate_text(text: str, m: Mutant) -> str:
    """``text`` with the line whose content is ``m.original`` replaced by ``m.mutated`` (same indentation)."""
    lines = text.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if line.strip() == m.original.strip()]
    if not hits:
        raise MutantError(f"{m.id}: {m.file}: the original line is not there: {m.original.strip()!r}")
    if len(hits) > 1 and not m.line:
        raise MutantError(f"{m.id}: {m.file}: the original line is there {len(hits)} times; give its line")
    i = min(hits, key=lambda h: abs(h + 1 - m.line))
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    end = "\n" if lines[i].endswith("\n") else ""
    lines[i] = indent + m.mutated.strip() + end
    return "".join(lines)


def _copy_repo(dest: Path) -> None:
    """The repo's tracked and untracked (not ignored) files under ``dest``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def run_mutant(m: Mutant, timeout: float = 900) -> tuple[str, float]:
    """('killed' | 'survived' | 'error: ...', seconds) for ``m`` in a fresh copy of the repo; a mutant
    whose ``mutated`` equals its ``original`` runs its tests on the repo as it is."""
    with tempfile.TemporaryDirectory(prefix="npu-triage-mutant-") as tmp:
        copy = Path(tmp) / "repo"
        _copy_repo(copy)
        if (ROOT.parent / "shared").is_dir():  # the real exports the tests read beside the repo (../shared)
            (Path(tmp) / "shared").symlink_to(ROOT.parent / "shared")
        target = copy / m.file
        target.write_text(mutate_text(target.read_text(encoding="utf-8"), m), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
        check = "import analyzer, sys; sys.exit(not analyzer.__file__.startswith(sys.argv[1]))"
        if subprocess.run([sys.executable, "-c", check, str(copy)], cwd=copy, env=env).returncode:
            return "error: the copy's analyzer is not the one imported", 0.0
        start = time.monotonic()
        cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider", *m.tests]
        try:
            done = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "killed (timeout)", time.monotonic() - start
        seconds = time.monotonic() - start
        if done.returncode == 1:
            failed = [ln.split()[1] for ln in done.stdout.splitlines() if ln.startswith(("FAILED ", "ERROR "))]
            return f"killed by {failed[0].split(' - ')[0]}" if failed else "killed", seconds
        if done.returncode == 0:
            return "survived", seconds
        return f"error: pytest exit {done.returncode}: {(done.stdout + done.stderr).strip().splitlines()[-1:]}", seconds


def _baseline(mutants: list[Mutant]) -> str:
    """'' when every mutant's tests pass on the repo as it is (else a kill would mean nothing), else what failed."""
    for tests in dict.fromkeys(m.tests for m in mutants):
        same = Mutant("base", "", mutants[0].file, mutants[0].original, mutants[0].original, tests, mutants[0].line)
        outcome, _ = run_mutant(same)
        if outcome != "survived":
            return f"{outcome} on {' '.join(tests)}"
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mutants", description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*", help="only these mutant ids")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--check", action="store_true", help="check that every original line is found once")
    parser.add_argument("--no-baseline", action="store_true", help="skip running the tests without a mutant")
    parser.add_argument("--file", type=Path, default=MUTANTS, help="the mutants file (default: bench/mutants.toml)")
    parser.add_argument("--tests", help="run these pytest arguments (one string) instead of each mutant's tests")
    args = parser.parse_args(argv)
    mutants = [m for m in load_mutants(args.file) if not args.ids or m.id in args.ids]
    if args.tests:
        mutants = [replace(m, tests=tuple(shlex.split(args.tests))) for m in mutants]
    if args.list or args.check:
        for m in mutants:
            if args.check:
                mutate_text((ROOT / m.file).read_text(encoding="utf-8"), m)
            print(f"{m.id:4} {m.area:8} {m.file}: {m.bug}")
        return 0
    if not (args.no_baseline or args.list or args.check):
        failed = _baseline(mutants)
        print(f"baseline, no mutant: {failed or 'the tests of every mutant pass'}", flush=True)
        if failed:
            return 2
    killed = 0
    for m in mutants:
        outcome, seconds = run_mutant(m)
        killed += outcome.startswith("killed")
        print(f"{m.id:4} {m.area:8} {m.file}: {m.bug}\n     {outcome} ({seconds:.1f} s)", flush=True)
    print(f"{killed} of {len(mutants)} killed ({killed / max(1, len(mutants)):.0%})")
    return 0 if killed == len(mutants) else 1


if __name__ == "__main__":
    sys.exit(main())
