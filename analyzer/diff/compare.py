"""Diff two runs held in catalog tables (one connection): step time, op types, ops, pipeline mix, findings."""

from __future__ import annotations

import duckdb
import numpy as np

from analyzer.diff.align import Position, align_positions
from analyzer.diff.model import OpChange, OpDelta, RunDiff, TypeDelta
from analyzer.diff.noise import Shift, compare_samples, judge

PIPES = ("cube", "vector", "scalar", "mte")
TOP_OP_DELTAS = 15


def _rows(con: duckdb.DuckDBPyConnection, sql: str, run_id: str) -> list[dict]:
    return con.sql(sql, params={"r": run_id}).to_arrow_table().to_pylist()


def _step_ids(con, run_id: str) -> list:
    rows = _rows(con, "SELECT step_id FROM step_times WHERE run_id = $r ORDER BY step_id", run_id)
    return [r["step_id"] for r in rows]


def _has_steps(con, run_id: str) -> bool:
    """Whether the run has steps of its own (a run without is one 'step' with no id: the whole run)."""
    return any(s is not None for s in _step_ids(con, run_id))


def _type_samples(con, run_id: str, whole_run: bool = False) -> tuple[dict[str, np.ndarray], int]:
    """Per op type, its total time in every step of the run (0 in steps where it did not run), or with
    ``whole_run`` its total over the run as one sample; and the number of samples."""
    steps = _step_ids(con, run_id)
    index = {s: (0 if whole_run else i) for i, s in enumerate(steps)}
    steps = steps[:1] if whole_run else steps
    out: dict[str, np.ndarray] = {}
    for r in _rows(con, "SELECT step_id, op_type, total_dur_us FROM op_type_step_stats WHERE run_id = $r", run_id):
        if r["step_id"] in index:
            out.setdefault(r["op_type"], np.zeros(len(steps)))[index[r["step_id"]]] += r["total_dur_us"]
    return out, len(steps)


def _launches(con, run_id: str) -> dict[str, int]:
    return {
        r["op_type"]: r["launch_count"]
        for r in _rows(con, "SELECT op_type, launch_count FROM op_type_stats WHERE run_id = $r", run_id)
    }


def _step_shift(con, base: str, new: str, stepped: bool) -> tuple[Shift, str]:
    sql = "SELECT step_time_us FROM step_times WHERE run_id = $r AND step_time_us IS NOT NULL ORDER BY step_id"
    b = [r["step_time_us"] for r in _rows(con, sql, base)]
    n = [r["step_time_us"] for r in _rows(con, sql, new)]
    if b and n and stepped:  # a step against a step, never the run
        return compare_samples(np.array(b), np.array(n)), "steps"
    span = "SELECT span_us FROM run_metrics WHERE run_id = $r"
    return compare_samples(
        np.array([_rows(con, span, base)[0]["span_us"]]), np.array([_rows(con, span, new)[0]["span_us"]])
    ), "span"


def _positions(con, run_id: str) -> list[Position]:
    return [
        Position(r["ordinal"], r["op_type"], r["op_name_norm"], r["input_shapes"], r["dur_us_median"])
        for r in _rows(con, "SELECT * FROM op_positions WHERE run_id = $r ORDER BY ordinal", run_id)
    ]


def _type_deltas(con, base: str, new: str, renames, stepped: bool) -> list[TypeDelta]:
    # Per step when both runs have steps; else each op type's whole-run total on both sides (a step of one
    # run against the whole of the other would be a change of the length of what is compared).
    whole = not stepped
    (bs, b_steps), (ns, n_steps) = _type_samples(con, base, whole), _type_samples(con, new, whole)
    bl, nl = _launches(con, base), _launches(con, new)
    rename_of = {r.base_type: r.new_type for r in renames}
    keys: list[tuple[str, str | None, str | None]] = []
    for t in sorted(set(bs) | set(ns)):
        if t in rename_of:
            keys.append((f"{t} -> {rename_of[t]}", t, rename_of[t]))
        elif t not in set(rename_of.values()):  # a rename's new type is covered by its old one
            keys.append((t, t if t in bs else None, t if t in ns else None))
    zeros_b, zeros_n = np.zeros(max(1, b_steps)), np.zeros(max(1, n_steps))
    shifts = judge(
        [
            compare_samples(bs.get(b, zeros_b) if b else zeros_b, ns.get(n, zeros_n) if n else zeros_n)
            for _, b, n in keys
        ]
    )
    out = []
    for (label, b, n), s in zip(keys, shifts, strict=True):
        status = (
            "added"
            if b is None
            else "removed"
            if n is None
            else "renamed"
            if b != n
            else ("slower" if (s.rel_change or 0) > 0 else "faster")
            if s.significant
            else s.verdict  # 'unchanged', 'within noise' or 'no noise estimate'
        )
        out.append(TypeDelta(label, status, s, s.new_median - s.base_median, _launches_of(bl, b), _launches_of(nl, n)))
    return sorted(out, key=lambda t: (-abs(t.delta_us), t.op_type))


def _launches_of(launches: dict[str, int], op_type: str | None) -> int:
    return 0 if op_type is None else launches.get(op_type, 0)


def _pipe_shares(con, base: str, new: str) -> dict[str, Shift]:
    sql = (
        "SELECT "
        + ", ".join(f"{p}_time_us / core_time_us AS {p}" for p in PIPES)
        + " FROM step_times WHERE run_id = $r AND core_time_us > 0 ORDER BY step_id"
    )
    b, n = _rows(con, sql, base), _rows(con, sql, new)
    if not b or not n:
        return {}
    shifts = judge(
        [compare_samples(np.array([r[p] or 0.0 for r in b]), np.array([r[p] or 0.0 for r in n])) for p in PIPES]
    )
    return dict(zip(PIPES, shifts, strict=True))


def _findings(con, run_id: str) -> dict[tuple, dict]:
    rows = _rows(
        con,
        "SELECT code, rule, severity, title, subject, message FROM findings WHERE run_id = $r ORDER BY rank",
        run_id,
    )
    return {(r["code"], r["subject"]): r for r in rows}


def _label(run: dict) -> str:
    return f"{run['run_id']} (CANN {run.get('cann_version') or '?'})"


def diff_runs(con: duckdb.DuckDBPyConnection, base: str, new: str) -> RunDiff:
    """Compare run ``new`` against run ``base``; both live in the catalog tables of ``con``."""
    runs = {r["run_id"]: r for r in con.sql("SELECT * FROM catalog_runs").to_arrow_table().to_pylist()}
    alignment = align_positions(_positions(con, base), _positions(con, new))
    stepped = _has_steps(con, base) and _has_steps(con, new)  # both runs have steps: asked once for both uses
    step, basis = _step_shift(con, base, new, stepped)
    step = judge([step])[0]
    fb, fn = _findings(con, base), _findings(con, new)
    notes = []
    if basis == "span":
        notes.append("no steps in one of the runs: the whole-run span is compared, without a noise estimate")
    return RunDiff(
        _label(runs[base]),
        _label(runs[new]),
        runs[base],
        runs[new],
        step,
        basis,
        tuple(_type_deltas(con, base, new, alignment.renames, stepped)),
        tuple(_op_deltas(alignment)),
        tuple(_op_changes(alignment)),
        tuple(alignment.renames),
        _pipe_shares(con, base, new),
        tuple(fn[k] for k in fn if k not in fb),
        tuple(fb[k] for k in fb if k not in fn),
        tuple(notes),
    )


def _op_deltas(alignment) -> list[OpDelta]:
    deltas = [
        OpDelta(
            b.ordinal,
            n.ordinal,
            b.op_type if b.op_type == n.op_type else f"{b.op_type} -> {n.op_type}",
            b.input_shapes,
            b.dur_us,
            n.dur_us,
        )
        for b, n in alignment.pairs
    ]
    deltas.sort(key=lambda d: (-abs((d.new_us or 0) - (d.base_us or 0)), d.base_ordinal))
    return deltas[:TOP_OP_DELTAS]


def _op_changes(alignment) -> list[OpChange]:
    out = []
    for change, positions in (("added", alignment.added), ("removed", alignment.removed)):
        by_type: dict[str, list[float]] = {}
        for p in positions:
            by_type.setdefault(p.op_type, []).append(p.dur_us or 0.0)
        out += [OpChange(t, change, len(v), float(sum(v))) for t, v in sorted(by_type.items())]
    return out
