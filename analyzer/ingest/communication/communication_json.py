"""communication.json -> comm_ops; communication_matrix.json is only checked and recorded.

Layout: ``{"step50": {"collective" | "p2p": {"<op>@<group>": {"Communication Time Info": {...},
"Communication Bandwidth Info": {"<transport>": {...}}}, "Total Op Info": {...}}}}``. Times are
milliseconds here (converted to us); ``Start Timestamp(us)`` is read as a decimal so start_ns is
exact. ``Total Op Info`` is an aggregate and is skipped. SDMA is the sum of the on-node links
(HCCS, PCIE, SIO) in the files seen, so the data moved is RDMA + the on-node links, and the main
transport is the link with the largest transit size (SDMA only when no link is itemised).

The matrix file (per link pair, per op group) adds nothing comm_ops needs: it is parsed to
catch a broken file, and recorded as read.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from analyzer.ingest.inserts import insert_rows
from analyzer.ingest.model import ReadContext

if TYPE_CHECKING:  # pyarrow loads when a communication file is read, not with every command
    import pyarrow as pa

_LINKS = ("HCCS", "RDMA", "PCIE", "SIO")  # physical transports; SDMA aggregates the on-node ones
_TIMES_MS = {
    "elapse_us": "Elapse Time(ms)",
    "transit_us": "Transit Time(ms)",
    "wait_us": "Wait Time(ms)",
    "sync_us": "Synchronization Time(ms)",
    "idle_us": "Idle Time(ms)",
}
_RATIOS = {"wait_ratio": "Wait Time Ratio", "sync_ratio": "Synchronization Time Ratio"}
# comm_ops columns of a file's rows and their Arrow types (pyarrow's type names).
_COMM_OPS_TYPES = {
    "step_id": "int64",
    "op_name": "string",
    "group_name": "string",
    "op_kind": "string",
    "start_ns": "int64",
    "transit_size_mb": "float64",
    "bandwidth_gb_per_s": "float64",
    "transport": "string",
    **{k: "float64" for k in (*_TIMES_MS, *_RATIOS)},
}


def comm_ops_table(rows: list[dict[str, object]]) -> pa.Table:
    """``communication_rows`` as an Arrow table of comm_ops' columns."""
    import pyarrow as pa

    return pa.Table.from_pylist(rows, schema=pa.schema([(k, getattr(pa, t)()) for k, t in _COMM_OPS_TYPES.items()]))


def _number(value: object) -> Decimal | None:
    """A finite number from a JSON value (numeric text, int), else None."""
    if value is None:
        return None
    if type(value) is int:
        return Decimal(value)
    # a number with a fraction or an exponent is its text (_parse), read as the JSON wrote it
    try:
        d = Decimal(value.strip() if type(value) is str else str(value).strip())
    except (ArithmeticError, ValueError):
        return None
    return d if d.is_finite() else None


def _float(value: object, scale: int = 1) -> float | None:
    d = _number(value)
    return None if d is None else float(d * scale)


def _bandwidth(info: object) -> dict[str, object]:
    """transit_size_mb, bandwidth_gb_per_s and transport of one op's bandwidth info."""
    info = info if isinstance(info, dict) else {}
    sizes = {t: _float(v.get("Transit Size(MB)")) for t, v in info.items() if isinstance(v, dict)}
    links = {t: s for t, s in sizes.items() if t in _LINKS and s is not None}
    if links:
        total: float | None = sum(links.values())
        main = max(links, key=lambda t: (links[t], -_LINKS.index(t)))
        if links[main] <= 0 and (sizes.get("SDMA") or 0) > 0:
            main = "SDMA"
    else:
        total = sizes.get("SDMA")
        main = "SDMA" if total else None
    if main is None or not (sizes.get(main) or 0) > 0:
        return {"transit_size_mb": total, "bandwidth_gb_per_s": None, "transport": None}
    bandwidth = _float(info[main].get("Bandwidth(GB/s)"))
    return {"transit_size_mb": total, "bandwidth_gb_per_s": bandwidth, "transport": main}


def _op_row(step_id: int | None, kind: str, key: str, op: dict) -> dict[str, object]:
    name, _, group = key.rpartition("@")
    times = op.get("Communication Time Info")
    times = times if isinstance(times, dict) else {}
    start = _number(times.get("Start Timestamp(us)"))
    row: dict[str, object] = {
        "step_id": step_id,
        "op_name": name or key,
        "group_name": group if name else None,
        "op_kind": kind,
        "start_ns": None if start is None else int(start * 1000),
    }
    row.update({col: _float(times.get(raw), 1000) for col, raw in _TIMES_MS.items()})
    row.update({col: _float(times.get(raw)) for col, raw in _RATIOS.items()})
    row.update(_bandwidth(op.get("Communication Bandwidth Info")))
    return row


def _step_id(key: str) -> int | None:
    """50 from 'step50'; None for a step key without a number."""
    m = re.search(r"(\d+)$", key)
    return int(m.group(1)) if m else None


def _rows(doc: dict, path: Path, ctx: ReadContext) -> list[dict[str, object]]:
    rows = []
    for step_key, step in doc.items():
        if not isinstance(step, dict):
            ctx.report(path, f"key {step_key!r}", "warning", "step entry is not an object; skipped")
            continue
        for kind in ("collective", "p2p"):
            ops = step.get(kind) or {}
            for key, op in ops.items() if isinstance(ops, dict) else ():
                if key == "Total Op Info":
                    continue
                if not isinstance(op, dict):
                    ctx.report(
                        path,
                        f"{step_key}.{kind}.{key}",
                        "warning",
                        "op entry is not an object; skipped",
                    )
                    continue
                rows.append(_op_row(_step_id(step_key), kind, key, op))
    return rows


def _parse(path: Path, ctx: ReadContext) -> dict | None:
    """The JSON object of a file, or None with a problem reported."""
    try:
        with path.open("rb") as fh:
            doc = json.loads(fh.read().decode("utf-8-sig"), parse_float=str)
    except OSError as exc:
        ctx.report(
            path,
            "",
            "error",
            f"cannot open the file: {exc.strerror or exc}",
            "check the path and permissions",
        )
        return None
    except UnicodeDecodeError as exc:
        ctx.report(
            path,
            f"byte {exc.start}",
            "error",
            "not UTF-8 text",
            "replace it with the exported JSON",
        )
        return None
    except json.JSONDecodeError as exc:
        ctx.report(
            path,
            f"line {exc.lineno} column {exc.colno}",
            "error",
            f"not valid JSON: {exc.msg}",
            "the file is truncated or damaged; re-export it",
        )
        return None
    if not isinstance(doc, dict):
        ctx.report(
            path,
            "byte 0",
            "error",
            "expected a JSON object keyed by step",
            "check the file is communication.json",
        )
        return None
    return doc


def communication_rows(paths: tuple[Path, ...], ctx: ReadContext) -> list[dict[str, object]]:
    """The comm_ops rows (COMM_OPS_TYPES, no run id) of communication.json files; problems go to ``ctx``."""
    rows: list[dict[str, object]] = []
    for path in paths:
        doc = _parse(path, ctx)
        if doc is not None:
            ctx.mark_read(path)
            rows.extend(_rows(doc, path, ctx))
    return rows


def load_communication(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Read communication.json files into comm_ops. Returns rows inserted."""
    rows = communication_rows(paths, ctx)
    if not rows:
        return 0
    con.register("_comm_ops_rows", comm_ops_table(rows))
    try:
        return insert_rows(con, "comm_ops", ctx.run_id, "SELECT * FROM _comm_ops_rows")
    finally:
        con.unregister("_comm_ops_rows")


def load_communication_matrix(con: duckdb.DuckDBPyConnection, paths: tuple[Path, ...], ctx: ReadContext) -> int:
    """Check that communication_matrix.json files parse; record them as read. Returns 0."""
    check_communication_matrix(paths, ctx)
    return 0


def check_communication_matrix(paths: tuple[Path, ...], ctx: ReadContext) -> None:
    """Parse communication_matrix.json files (nothing of them is stored); problems go to ``ctx``."""
    for path in paths:
        if _parse(path, ctx) is not None:
            ctx.mark_read(path)
