"""Read a dump folder or a reference folder: every tensor file under it, classified by its name."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.accuracy.read.dump_names import DumpName, parse_dump_name, parse_npy_name
from analyzer.accuracy.read.native import read_native
from analyzer.accuracy.read.npy_files import read_npy, read_pt
from analyzer.accuracy.read.problems import ReadProblems
from analyzer.accuracy.read.tensor_source import TensorSource

OVERFLOW_PREFIX = "Opdebug.Node_OpDebug."
TILING_INFO = "tiling_info.json"
_LEFT_ASIDE = {".json", ".txt", ".log", ".md", ".html", ".proto"}


@dataclass
class TensorFolder:
    """What one folder holds: its tensors, its stats CSVs (path, dump name) and the problems met."""

    root: Path
    problems: ReadProblems  # named relative to the folder above ``root``
    tensors: list[TensorSource] = field(default_factory=list)
    stats_files: list[tuple[Path, DumpName]] = field(default_factory=list)
    tilings: list[TensorSource] = field(default_factory=list)  # tiling data inputs of native files
    tiling_files: list[Path] = field(default_factory=list)  # tiling_info.json
    overflow_files: list[Path] = field(default_factory=list)


def dump_files(root: Path) -> list[Path]:
    """Every regular file under ``root`` (or ``root`` itself), sorted, hidden ones left out."""
    if root.is_file():
        return [root]
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [Path(folder) / f for f in sorted(files) if not f.startswith(".")]
    return found


def read_folder(root: Path) -> TensorFolder:
    """The tensors of every dump, .npy, .pt and stats file under ``root``; problems named per file."""
    root = Path(root)
    base = root.parent if root.is_file() else root
    # problems name files from the folder given on, so that the dump's and the reference's stay apart
    result = TensorFolder(base, problems=ReadProblems(base.parent))
    for path in dump_files(root):
        _read_file(path, result)
    result.tensors = _one_form_each(result.tensors, result.problems)
    return result


_KIND_ORDER = {"native": 0, "npy": 1, "pt": 2}


def _one_form_each(tensors: list[TensorSource], problems: ReadProblems) -> list[TensorSource]:
    """One tensor per (operator, slot, index, dump time): a folder holding both the native files and their
    converted .npy keeps the native one (the other is named as left aside), instead of counting two runs."""
    kept: dict[tuple, TensorSource] = {}
    for t in sorted(tensors, key=lambda t: (_KIND_ORDER[t.kind], str(t.path))):
        key = (t.op_name, t.slot, t.slot_index, t.order_key)
        if t.order_key and key in kept:
            problems.warning(
                t.path, f"{t.slot} {t.slot_index}", f"the same tensor as {problems.name(kept[key].path)}; left aside"
            )
            continue
        kept[key] = t
    return list(kept.values())


def _read_file(path: Path, result: TensorFolder) -> None:
    problems, name = result.problems, path.name
    if name.startswith(OVERFLOW_PREFIX):
        result.overflow_files.append(path)
    elif name.endswith((".npy", ".pt")):
        parsed = parse_npy_name(name if name.endswith(".npy") else name[:-3] + ".npy")
        if parsed is None:
            problems.warning(path, "name", "a tensor file whose name says no operator and slot; left aside")
            return
        tensor = (read_npy if name.endswith(".npy") else read_pt)(path, parsed, problems)
        result.tensors += [tensor] if tensor else []
    elif name.endswith(".csv") and (dump := parse_dump_name(name[:-4])):
        result.stats_files.append((path, dump))
    elif dump := parse_dump_name(name):
        read = read_native(path, dump, problems)
        result.tensors += [t for t in read if t.slot != "tiling"]
        result.tilings += [t for t in read if t.slot == "tiling"]
    elif name == TILING_INFO:
        result.tiling_files.append(path)
    elif path.suffix not in _LEFT_ASIDE:
        problems.warning(path, "name", "not a dump or tensor file name; left aside")
