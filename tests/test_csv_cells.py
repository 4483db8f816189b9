"""Cells of number columns that spell a missing value or hold text: read as missing and counted per column,
every row kept (kernel_details.csv of torch_npu, op_summary of msprof), through `npu-triage ingest`."""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

import duckdb
import pytest

from analyzer.cli import main

_SPELLINGS = ["NA", "null", "-", "None", "#N/A"]
_NUMBERS = ("Wait Time(us)", "Task Wait Time(us)", "Block Dim", "Block Num", "aicore_time(us)", "aic_mac_ratio")


def _spoil(path: Path, seed: int) -> tuple[int, dict[str, int]]:
    """Mixed missing-value spellings in the number columns and text in the step id column of one CSV
    file; returns its rows and how many cells of each column were spoilt."""
    text = path.read_bytes().decode()
    rows = list(csv.reader(io.StringIO(text, newline="")))
    header, body = rows[0], [r for r in rows[1:] if r]
    cols = [header.index(c) for c in _NUMBERS if c in header]
    steps = [header.index(c) for c in ("Step Id", "Iteration ID") if c in header]
    rnd, spoilt = random.Random(seed), {}
    for r in body:
        for c in cols:
            if rnd.random() < 0.3:
                r[c] = rnd.choice(_SPELLINGS)
                spoilt[header[c]] = spoilt.get(header[c], 0) + 1
        for c in steps:
            if rnd.random() < 0.2:
                r[c] = "warmup"
                spoilt[header[c]] = spoilt.get(header[c], 0) + 1
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n" if "\r\n" in text else "\n").writerows([header, *body])
    path.write_bytes(out.getvalue().encode())
    return len(body), spoilt


@pytest.mark.slow
@pytest.mark.parametrize(("layout", "pattern"), [("torch_npu", "kernel_details.csv"), ("msprof", "op_summary_*.csv")])
def test_missing_value_spellings_and_text_keep_every_task(tmp_path, capsys, layout, pattern):
    from fixtures.generator import write_export

    (root,) = write_export("healthy", tmp_path / "in", layout=layout, seed=57, steps=2)
    files = sorted(root.rglob(pattern))
    spoilt: dict[str, int] = {}
    rows = 0
    for i, path in enumerate(files):
        n, cols = _spoil(path, 57 + i)
        rows += n
        for col, count in cols.items():
            spoilt[col] = spoilt.get(col, 0) + count
    assert len(spoilt) >= 3
    db = tmp_path / "t.duckdb"
    assert main(["ingest", str(root), "--db", str(db)]) == 0
    err = capsys.readouterr().err
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM ops").fetchall() == [(rows,)]
    for col, count in spoilt.items():
        said = [line for line in err.splitlines() if f"cells of {col!r}" in line]
        assert said, (col, err)
        assert sum(int(line.split(f"column {col!r}: ")[1].split(" ")[0]) for line in said) == count
    assert "do not fit the header" not in err and "row skipped" not in err
