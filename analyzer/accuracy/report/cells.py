"""Fixed-format cells of the accuracy reports (Markdown and HTML share them)."""

from __future__ import annotations


def number(value, fmt: str = ".4g") -> str:
    """A number at fixed precision, '' when missing.

    >>> number(0.123456789, ".6f"), number(None)
    ('0.123457', '')
    """
    return "" if value is None else format(value, fmt)


def share(value) -> str:
    """A 0-1 share as a whole percentage, '' when missing.

    >>> share(0.25), share(None)
    ('25%', '')
    """
    return "" if value is None else f"{value:.0%}"


def role(op: dict, culprits: set[str], downstream: set[str]) -> str:
    """'culprit', 'downstream' or '' for an operator row, from the first-divergent findings."""
    name = op["op_name"] + (f" #{op['occurrence']}" if op["occurrence"] else "")
    return "culprit" if name in culprits else ("downstream" if name in downstream else "")


def roles(findings) -> tuple[set[str], set[str]]:
    """The culprits and the operators downstream of them, named by the findings that list downstream operators."""
    culprits, downstream = set(), set()
    for f in findings:
        if "downstream" in f.details:
            culprits.add(f.subject)
            downstream |= {d for d in str(f.details["downstream"] or "").split(", ") if d and d != "none"}
    return culprits, downstream


OPERATOR_COLUMNS = ("#", "operator", "type", "input cos", "output cos", "max abs err", "max rel err", "where", "role")
PROFILE_COLUMNS = ("device us", "launches", "cube", "vector", "mte")


def operator_cells(op: dict, role_text: str, with_profile: bool) -> list[str]:
    """The cells of one operator row."""
    name = op["op_name"] + (f" #{op['occurrence']}" if op["occurrence"] else "")
    cells = [
        str(op["exec_order"]), name, op["op_type"] or "", number(op["input_cosine"], ".6f"),
        number(op["output_cosine"], ".6f"), number(op["max_abs_err"]), number(op["max_rel_err"]),
        op["verdict"] or "", role_text,
    ]  # fmt: skip
    if with_profile:
        cells += [
            number(op["device_time_us"], ".1f"), number(op["launches"], "d") if op["launches"] is not None else "",
            share(op["cube_ratio"]), share(op["vector_ratio"]), share(op["mte_ratio"]),
        ]  # fmt: skip
    return cells


STATS_COLUMNS = ("side", "operator", "tensor", "dtype", "shape", "max", "min", "mean", "NaN", "-Inf", "+Inf")


def stats_cells(row: dict) -> list[str]:
    """The cells of one statistics-dump row."""
    return [
        row["side"], row["op_name"], f"{row['slot']} {row['slot_index']}", row["dtype"] or "", row["shape"] or "",
        number(row["max_value"]), number(row["min_value"]), number(row["avg_value"]),
        *(str(row[k]) if row[k] is not None else "" for k in ("nan_count", "neg_inf_count", "pos_inf_count")),
    ]  # fmt: skip


def operator_table(report) -> tuple[list[str], list[list[str]]]:
    """The operators table of a report (an AccuracyReport): its header and a row per operator, in execution order."""
    culprits, downstream = roles(report.findings)
    head = list(OPERATOR_COLUMNS) + (list(PROFILE_COLUMNS) if report.has_profile else [])
    rows = [operator_cells(op, role(op, culprits, downstream), report.has_profile) for op in report.operators]
    return head, rows
