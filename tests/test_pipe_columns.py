"""The derived pipe columns of ops have two forms, derived while a reader inserts (``with_derived``, one
SELECT per layer) and by the UPDATE of underived rows (``derive_pipeline``, written out in full): they
agree on every value."""

from __future__ import annotations

import random

from analyzer.ingest.database import connect
from analyzer.ingest.pipe_columns import INPUTS, derive_pipeline, with_derived

# Values that take each branch: missing, zero (no core time), a ratio or time below, at and above 1.
VALUES = [None, 0.0, 0.25, 1.0, 3.5, 120.0]


def test_derived_at_insert_and_by_update_agree():
    rng = random.Random(7)
    rows = [[rng.choice(VALUES) for _ in INPUTS] for _ in range(600)]
    rows += [[None] * len(INPUTS), [1.0] * len(INPUTS)]
    con = connect()
    columns = ", ".join(INPUTS)
    con.execute(
        f"INSERT INTO ops (run_id, task_id, {columns}) SELECT 'r', unnest(range(?)), "
        + ", ".join("unnest(?::DOUBLE[])" for _ in INPUTS),
        [len(rows), *([r[i] for r in rows] for i in range(len(INPUTS)))],
    )
    inputs = f"SELECT task_id, {columns} FROM ops"
    at_insert = con.execute(f"SELECT * EXCLUDE ({columns}) FROM ({with_derived(inputs)}) ORDER BY task_id")
    derived = [d[0] for d in at_insert.description if d[0] != "task_id"]
    expected = at_insert.fetchall()
    assert len(derived) == 7 and any(r[-1] for r in expected)  # some rows have a bound pipe
    derive_pipeline(con, "r")
    assert con.execute(f"SELECT task_id, {', '.join(derived)} FROM ops ORDER BY task_id").fetchall() == expected
