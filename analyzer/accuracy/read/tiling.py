"""Tiling data: the tiling input of native dump files, and tiling_info.json files (per operator, as dumped)."""

from __future__ import annotations

import json
from pathlib import Path

from analyzer.accuracy.read.problems import ReadProblems, reason
from analyzer.accuracy.read.tensor_source import TensorSource

HEX_BYTES = 64  # leading bytes kept as hex, enough to tell two tilings apart at a glance


def tiling_input_row(t: TensorSource, occurrence: int) -> dict:
    """A tiling_data row of a native file's tiling input."""
    head = t.read(0, min(HEX_BYTES, t.element_count)).tobytes().hex()
    return {"op_name": t.op_name, "occurrence": occurrence, "op_type": t.op_type, "size_bytes": t.size_bytes,
            "head_hex": head, "block_dim": None, "tiling_key": None, "info_json": None}  # fmt: skip


def tiling_info_rows(path: Path, problems: ReadProblems) -> list[dict]:
    """Rows of a tiling_info.json: an object per operator name, or a list of objects naming theirs (op_name)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problems.error(path, "file", f"not a readable tiling JSON file ({reason(exc)})")
        return []
    items = list(doc.items()) if isinstance(doc, dict) else [(d.get("op_name"), d) for d in doc if isinstance(d, dict)]
    rows = []
    for op, info in items:
        if not isinstance(info, dict) or not op:
            problems.warning(path, str(op or "entry"), "a tiling entry that names no operator; left aside")
            continue
        named = {"op_name": str(op), "occurrence": 0, "op_type": str(info.get("op_type", "")), "size_bytes": None}
        numbers = {"block_dim": _int(info.get("block_dim")), "tiling_key": _text(info.get("tiling_key"))}
        rows.append(named | numbers | {"head_hex": None, "info_json": json.dumps(info, sort_keys=True)})
    return rows


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value) -> str | None:
    return None if value is None else str(value)
