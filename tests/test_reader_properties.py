"""Property-based tests of the readers (hypothesis) and a time-boxed fuzzing run of byte mutations.

Default runs are short. With the environment variable CI set, the 'ci' profile runs more examples
and the fuzzing run mutates the inputs in NPU_TRIAGE_FUZZ_ROUNDS seeded rounds (default 80; 3 locally):
a count, not a time box, so that a run checks the same mutations on any machine.
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from analyzer.ingest import load_export
from tests.malformed import base_exports as base
from tests.malformed.base_exports import csv_cell, trace_bytes

pytestmark = pytest.mark.slow

settings.register_profile("dev", max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROFILE = "ci" if os.environ.get("CI") else "dev"
FUZZ_ROUNDS = int(os.environ.get("NPU_TRIAGE_FUZZ_ROUNDS", "80")) if os.environ.get("CI") else 3

HEADER = "Name,Type,Accelerator Core,Start Time(us),Duration(us)"
# Any text but NUL (a NUL byte marks a file as binary) and lone surrogates (not encodable).
NAMES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20)
DURATIONS = st.one_of(st.just("N/A"), st.just(""), st.floats(0, 1e6, allow_nan=False).map(lambda x: f"{x:.3f}"))
STARTS_NS = st.integers(1_600_000_000_000_000_000, 1_900_000_000_000_000_000)
ROWS = st.lists(
    st.tuples(NAMES, st.sampled_from(["MatMulV2", "N/A", "Add"]), STARTS_NS, DURATIONS),
    min_size=1,
    max_size=12,
)


def us_text(ns: int) -> str:
    return f"{ns // 1000}.{ns % 1000:03d}\t"


def expected_text(cell: str) -> str | None:
    """What a text cell reads back as: trimmed, and NULL for blank or N/A."""
    t = cell.strip(" \t\r\n")
    return None if t in ("", "N/A") else t


def write_export(folder: Path, files: dict[str, bytes]) -> Path:
    apo = folder / "r_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    apo.mkdir(parents=True)
    for name, data in files.items():
        (apo / name).write_bytes(data)
    return folder


def read_ops(folder: Path) -> list[tuple]:
    ingested = load_export(folder)
    return ingested.con.execute("SELECT op_name, op_type, start_ns, dur_us FROM ops").fetchall()


@settings.get_profile(PROFILE)
@given(rows=ROWS)
@example(
    rows=[
        ("\r", "MatMulV2", 1_600_000_000_000_000_000, "N/A"),
        ('a\r\nb,"c"', "N/A", 1_600_000_000_000_000_001, ""),
        ("<script>alert(1)</script>", "Add", 1_899_999_999_999_999_999, "0.000"),
        ("N/A", "Add", 1_700_000_000_123_456_789, "1.5"),
    ]
)
def test_reader_kernel_details_round_trips_names_starts_and_na(rows):
    lines = [HEADER] + [",".join([csv_cell(n), t, "AI_CORE", us_text(s), d]) for n, t, s, d in rows]
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_export(Path(tmp), {"kernel_details.csv": ("\r\n".join(lines) + "\r\n").encode()})
        got = sorted(read_ops(folder), key=lambda r: (r[2], r[0] or "", r[3] is None, r[3] or 0))
    # Rows that read the same are one row written twice: kept once (row_checks.drop_duplicate_rows).
    want = sorted(
        {(expected_text(n), expected_text(t), s, None if d in ("N/A", "") else float(d)) for n, t, s, d in rows},
        key=lambda r: (r[2], r[0] or "", r[3] is None, r[3] or 0),
    )
    assert [r[2] for r in got] == [r[2] for r in want]  # exact int64 ns, never via float
    assert [r[3] is None for r in got] == [r[3] is None for r in want]  # N/A and blanks are NULL, never 0
    assert sorted(map(str, (r[0] for r in got))) == sorted(map(str, (r[0] for r in want)))
    assert sorted(map(str, (r[1] for r in got))) == sorted(map(str, (r[1] for r in want)))


def mutate(data: bytes, rng: random.Random, count: int) -> bytes:
    """Random byte edits: overwrite, delete, insert garbage, duplicate a range, truncate."""
    buf = bytearray(data)
    for _ in range(count):
        if not buf:
            break
        at = rng.randrange(len(buf))
        kind = rng.randrange(5)
        if kind == 0:
            buf[at] = rng.randrange(256)
        elif kind == 1:
            del buf[at : at + rng.randrange(1, 64)]
        elif kind == 2:
            buf[at:at] = rng.randbytes(rng.randrange(1, 16))
        elif kind == 3:
            buf[at:at] = buf[max(0, at - 40) : at]
        else:
            del buf[at:]
    return bytes(buf)


def load_never_raises(files: dict[str, bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ingested = load_export(write_export(Path(tmp), files))
        for problem in ingested.problems:
            assert problem.severity in ("error", "warning", "info") and problem.problem
            assert problem.file or problem.severity != "error", "an error names its file"
        ingested.con.execute("SELECT count(*) FROM ops").fetchone()


KD_BYTES = base.kernel_details_text().encode()


@settings.get_profile(PROFILE)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 8))
def test_reader_mutated_kernel_details_never_raises(seed, count):
    load_never_raises({"kernel_details.csv": mutate(KD_BYTES, random.Random(seed), count)})


@settings.get_profile(PROFILE)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 8))
def test_reader_mutated_trace_view_never_raises(seed, count):
    load_never_raises(
        {
            "trace_view.json": mutate(trace_bytes(), random.Random(seed), count),
            "kernel_details.csv": KD_BYTES,
        }
    )


def test_reader_fuzz_time_boxed_mutations_never_raise():
    """CI's fuzzing run: FUZZ_ROUNDS seeded mutations of every base file (3 rounds locally)."""
    files = {
        "kernel_details.csv": KD_BYTES,
        "trace_view.json": trace_bytes(),
        "op_statistic.csv": b"OP Type,Core Type,Count,Total Time(us)\nAdd,AI_CORE,2,3.5\n",
        "step_trace_time.csv": b"Step,Computing,Free\n50,658.7,341.3\n",
    }
    for seed in range(FUZZ_ROUNDS):
        rng = random.Random(seed)
        mutated = {name: mutate(data, rng, rng.randrange(1, 12)) for name, data in files.items()}
        try:
            load_never_raises(mutated)
        except Exception as exc:  # name the seed that reproduces it
            raise AssertionError(f"fuzz seed {seed} breaks load_export: {type(exc).__name__}: {exc}") from exc


@settings.get_profile(PROFILE)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 6))
def test_reader_mutated_sqlite_db_never_raises_nor_writes_beside_it(seed, count):
    from tests.tree_hash import tree_digest

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        db = base.write_torch_db(Path(tmp))
        buf = bytearray(db.read_bytes())
        for _ in range(count):  # keep the 100-byte header so SQLite gets past its magic
            at = rng.randrange(100, len(buf))
            buf[at : at + rng.randrange(1, 200)] = rng.randbytes(rng.randrange(1, 200))
        db.write_bytes(bytes(buf))
        before = tree_digest(Path(tmp))
        load_export(Path(tmp)).con.execute("SELECT count(*) FROM ops").fetchone()
        assert tree_digest(Path(tmp)) == before
