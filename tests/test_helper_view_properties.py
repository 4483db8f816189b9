"""The interval helper views against a brute-force Python model on random small task sets."""

from __future__ import annotations

import functools
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.ingest.database import append_rows, connect
from analyzer.rule_engine.views import create_views

pytestmark = pytest.mark.slow

# (device_id, stream_id, start us, duration us): small ranges, so ties and overlaps are common.
_TASK = st.tuples(
    st.sampled_from([0, 1]),
    st.sampled_from([1, 2]),
    st.integers(0, 30),
    st.sampled_from([0, 1, 2, 5]),
)


@functools.cache
def _empty_database():
    """One connection holding the empty normalized tables; each example works in a transaction rolled
    back after it (the helper views included), so every example starts from empty tables as a fresh
    connection would, without paying for one."""
    return connect()


@contextmanager
def _loaded(
    tasks: list[tuple[int, int, int, int]],
    query: str,
    steps: list[tuple[int, int, int]] = (),
    op_step_ns: int = 0,
    comm_stream: int | None = None,
):
    """The connection holding ``tasks`` (and ``steps``) and the helpers ``query`` reads over them (as a rule's
    query gets them: the others would only cost time), until the block ends; with ``op_step_ns``, each task's
    own step_id is its start // op_step_ns (steps read from the ops); the tasks of stream ``comm_stream`` are
    communication (HCCL), the others compute (AI_CORE)."""
    con = _empty_database()
    con.execute("BEGIN")
    try:
        devices, streams, starts, durs = (list(column) for column in zip(*tasks, strict=True)) if tasks else ([],) * 4
        append_rows(
            con,
            "ops",
            "SELECT 'r' AS run_id, d::INTEGER AS device_id, s::INTEGER AS stream_id, "
            "CASE WHEN s = $comm THEN 'HCCL' ELSE 'AI_CORE' END AS task_type, "
            "'T' || s AS op_type, 'op' || (n - 1) AS op_name, st::BIGINT * 1000 AS start_ns, du::DOUBLE AS dur_us, "
            "(st + du)::BIGINT * 1000 AS end_ns, "
            "CASE WHEN $op_step > 0 THEN (st::BIGINT * 1000) // $op_step END AS step_id "
            "FROM (SELECT unnest($d) AS d, unnest($s) AS s, unnest($st) AS st, unnest($du) AS du, "
            "unnest(range(1, len($d) + 1)) AS n)",
            {"d": devices, "s": streams, "st": starts, "du": durs, "op_step": op_step_ns, "comm": comm_stream},
        )
        for step_id, start, end in steps:
            con.execute(
                "INSERT INTO steps (run_id, step_id, start_ns, end_ns) VALUES ('r', ?, ?, ?)",
                [step_id, start * 1000, end * 1000],
            )
        create_views(con, needs=[query])
        yield con
    finally:
        con.execute("ROLLBACK")


def _rows(tasks: list[tuple[int, int, int, int]], sql: str) -> list[tuple]:
    """The rows of ``sql`` over the helper views of a database holding ``tasks``."""
    with _loaded(tasks, sql) as con:
        return con.execute(sql).fetchall()


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """Disjoint [start, end) islands of ``spans`` (touching ones merge) with their task counts."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            merged[-1][2] += 1
        else:
            merged.append([start, end, 1])
    return [tuple(m) for m in merged]


def _islands_by_device(tasks) -> dict[int, list[tuple[int, int, int]]]:
    """Device -> its tasks' islands in ns (the model the views are checked against)."""
    return {
        device: _union([(s * 1000, (s + d) * 1000) for dev, _, s, d in tasks if dev == device])
        for device in sorted({t[0] for t in tasks})
    }


_INTERVALS = "SELECT device_id, interval_no, start_ns, end_ns, task_count FROM {table} ORDER BY device_id, start_ns"


def _numbered_islands(tasks) -> list[tuple[int, int, int, int, int]]:
    """(device, interval_no, start, end, tasks) of every island of every device's tasks, in order."""
    return [
        (device, n + 1, s, e, c)
        for device, islands in _islands_by_device(tasks).items()
        for n, (s, e, c) in enumerate(islands)
    ]


def _busy_by_type(tasks) -> list[tuple[int, str, float, int]]:
    """(device, op type, busy us, tasks): the union length of each type's tasks (type T<stream>)."""
    rows = []
    for device, stream in sorted({(t[0], t[1]) for t in tasks}):
        islands = _union([(s * 1000, (s + d) * 1000) for dev, st_, s, d in tasks if (dev, st_) == (device, stream)])
        rows.append((device, f"T{stream}", sum(e - s for s, e, _ in islands) / 1000.0, sum(c for *_, c in islands)))
    return rows


_RANDOM_TASKS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_RANDOM_TASKS
@given(st.lists(_TASK, max_size=25))
def test_busy_intervals_are_the_union_of_tasks_per_device(tasks):
    got = _rows(tasks, _INTERVALS.format(table="_busy_intervals"))
    assert got == _numbered_islands(tasks)


@_RANDOM_TASKS
@given(st.lists(_TASK, max_size=25))
def test_device_gaps_lie_between_the_islands(tasks):
    got = _rows(tasks, "SELECT device_id, start_ns, end_ns FROM _device_gaps ORDER BY device_id, start_ns")
    assert got == [
        (device, a[1], b[0])
        for device, islands in _islands_by_device(tasks).items()
        for a, b in zip(islands, islands[1:], strict=False)
    ]


def test_a_gap_takes_the_step_window_holding_its_start_and_ties_go_to_the_longest_then_lowest_id():
    # Gap [5, 20) us. Steps 3, 1 and 2 all start at 0; 3 and 2 end last (at 10), the lower id wins.
    query = "SELECT step_id, start_ns, end_ns FROM _device_gaps"
    with _loaded([(0, 1, 0, 5), (0, 1, 20, 5)], query, steps=[(3, 0, 10), (1, 0, 8), (2, 0, 10)]) as con:
        assert con.execute(query).fetchall() == [(2, 5000, 20000)]
    # Outside every step window the gap takes the step of the task after it (none here: NULL).
    with _loaded([(0, 1, 0, 5), (0, 1, 20, 5)], query, steps=[(7, 0, 4)]) as con:
        assert con.execute(query).fetchall() == [(None, 5000, 20000)]


@_RANDOM_TASKS
@given(st.lists(_TASK, max_size=25))
def test_op_type_busy_is_the_length_of_each_types_union(tasks):
    got = _rows(tasks, "SELECT device_id, op_type, busy_us, task_count FROM _op_type_busy ORDER BY device_id, op_type")
    assert got == _busy_by_type(tasks)


@_RANDOM_TASKS
@given(st.lists(_TASK, max_size=25))
def test_without_step_windows_a_gap_takes_the_step_of_the_task_after_it(tasks):
    query = "SELECT step_id, end_ns FROM _device_gaps"
    with _loaded(tasks, query, op_step_ns=7000) as con:  # each task's own step, from the ops
        gaps = con.execute(query).fetchall()
    assert all(step == end // 7000 for step, end in gaps)  # the step of the task after the gap


@_RANDOM_TASKS
@given(st.lists(_TASK, max_size=25))
def test_active_intervals_are_the_union_of_every_task_per_device_whatever_its_kind(tasks):
    # Stream 2 communicates on some devices' tasks only: a device of compute tasks only copies its busy
    # intervals, the others are merged from all their tasks; both must be the union of every task.
    query = _INTERVALS.format(table="_active_intervals")
    with _loaded(tasks, query, comm_stream=2) as con:
        got = con.execute(query).fetchall()
    assert got == _numbered_islands(tasks)


@_RANDOM_TASKS
@given(st.lists(_TASK, max_size=25))
def test_the_task_before_a_gap_is_the_one_ending_last_and_of_those_the_last_stored(tasks):
    query = "SELECT device_id, start_ns, op_before FROM _device_gaps ORDER BY device_id, start_ns"
    with _loaded(tasks, query) as con:
        got = con.execute(query).fetchall()
    before = {}  # (device, end ns) -> name of the last stored task ending there
    for n, (device, _, start, dur) in enumerate(tasks):
        before[device, (start + dur) * 1000] = f"op{n}"
    assert got == [(device, start, before[device, start]) for device, start, _ in got]
    assert len(got) == sum(len(islands) - 1 for islands in _islands_by_device(tasks).values())
