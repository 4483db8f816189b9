"""Accuracy reports under a diagnosis's output folder that name its run (`accuracy --profile`): the diagnosis's
reports link to them and note each operator type they judged divergent."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ACCURACY_JSON = "accuracy.json"
ACCURACY_GENERATED_BY = "npu-triage accuracy"  # accuracy.json's generated_by (analyzer/accuracy/report/json_doc.py)
_PAGES = (".html", ".md", ".json")


def accuracy_reports(out_dir: Path) -> list[Path]:
    """Every accuracy.json under ``out_dir``, in path order."""
    return sorted(Path(out_dir).rglob(ACCURACY_JSON))


def accuracy_links(
    out_dir: Path, run_id: str, folder: Path, found: Sequence[Path] | None = None
) -> tuple[dict[str, Any], ...]:
    """One entry per accuracy.json under ``out_dir`` (``found``: accuracy_reports of it, when the reports of
    many runs are written at once) whose profile holds ``run_id``: the dump and reference it compared, its
    report files relative to ``folder`` (where the diagnosis's reports go), and its notes."""
    links = []
    for path in accuracy_reports(out_dir) if found is None else found:
        doc = _linked_doc(path, run_id)
        if doc is not None:
            files = {p.suffix[1:]: Path(os.path.relpath(p, folder)).as_posix() for p in _pages(path.parent)}
            links.append({"dump": str(doc.get("dump", "")), "reference": str(doc.get("reference", "")),
                          "files": files, "notes": family_notes(doc)})  # fmt: skip
    return tuple(links)


def _pages(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("accuracy.*") if p.suffix in _PAGES)


def _linked_doc(path: Path, run_id: str) -> dict | None:
    """The accuracy report at ``path`` when its profile holds ``run_id``; None for anything else (a file this
    run cannot read is some other run's business, not a problem of the profile)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("generated_by") != ACCURACY_GENERATED_BY:
        return None
    profile = doc.get("profile")
    return doc if isinstance(profile, dict) and run_id in (profile.get("run_ids") or []) else None


def family_notes(doc: dict) -> list[dict[str, str]]:
    """One note per operator type the accuracy run judged divergent: its findings' operators, and the operators
    a first divergent operator's error reaches downstream; by type name.

    >>> doc = {"operators": [{"op_name": "c2", "op_type": "Conv2D"}, {"op_name": "r", "op_type": "Relu"}],
    ...        "findings": [{"subject": "c2", "code": "R1", "severity": "critical", "title": "Computes wrong",
    ...                      "details": {"downstream": "r"}}]}
    >>> [n["op_type"] + ": " + n["note"] for n in family_notes(doc)]
    ['Conv2D: c2: Computes wrong (R1, critical)', 'Relu: r: inherits the error of c2']
    """
    types = {o.get("op_name"): o.get("op_type") or "" for o in doc.get("operators") or [] if isinstance(o, dict)}
    notes: dict[str, list[str]] = {}
    for f in doc.get("findings") or []:
        op = str(f.get("subject", ""))
        line = f"{op}: {f.get('title', '')} ({f.get('code', '')}, {f.get('severity', '')})"
        notes.setdefault(types.get(op) or op, []).append(line)
        downstream = str((f.get("details") or {}).get("downstream") or "")
        for name in (n.strip() for n in downstream.split(",")):
            if name and name != "none":
                notes.setdefault(types.get(name) or name, []).append(f"{name}: inherits the error of {op}")
    return [{"op_type": t, "note": "; ".join(lines)} for t, lines in sorted(notes.items())]
