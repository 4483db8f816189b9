"""Find every export under a path and say what wrote it, in which layout, and which files it holds."""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from analyzer.ingest.metadata.utf8_names import original, utf8_alias
from analyzer.ingest.model import ExportSource, IngestError

APO = "ASCEND_PROFILER_OUTPUT"
MSO = "mindstudio_profiler_output"

# File kind -> glob patterns, as declared in file_kinds.toml.
_KINDS = tomllib.loads(Path(__file__).with_name("file_kinds.toml").read_text(encoding="utf-8"))
_TEXT_KINDS: dict[str, list[str]] = _KINDS["text"]
_DB_KINDS: dict[str, list[str]] = _KINDS["db"]
# msprof_tx_*.json is a marker timeline, not the main one.
_EXCLUDED = re.compile(r"^msprof_tx_")


_METADATA_NAMES = ("profiler_info*.json", "profiler_metadata.json", "info.json*")
# Every name pattern of a file a reader or the metadata takes (``is_read_file``, once per archive member).
_READ_PATTERNS = tuple(p for kinds in (_TEXT_KINDS, _DB_KINDS) for ps in kinds.values() for p in ps) + _METADATA_NAMES


def is_read_file(name: str) -> bool:
    """True for a file name that a reader or the metadata takes (what an archive needs unpacked), with
    the SQLite side files (-wal, -shm) of a database that is read.

    >>> is_read_file("kernel_details.csv"), is_read_file("msprof_0.db-wal"), is_read_file("model.ckpt")
    (True, True, False)
    """
    base = re.sub(r"-(wal|shm|journal)$", "", name)
    return any(fnmatch.fnmatchcase(base, p) for p in _READ_PATTERNS)


def _name_matcher(patterns: list[str]) -> re.Pattern[str]:
    """One expression matching a file name against every glob pattern (what Path.match does with a
    pattern of one part), compiled once rather than parsed per file of thousands of folders."""
    return re.compile("|".join(fnmatch.translate(p) for p in patterns))


_INFO = _name_matcher(["profiler_info*.json"])
_MATCHERS = {kind: _name_matcher(patterns) for kinds in (_TEXT_KINDS, _DB_KINDS) for kind, patterns in kinds.items()}


def _files_in(folder: Path) -> list[str]:
    """The names of the files (links to files included) of a folder, sorted; none when it is not a folder."""
    if not folder.is_dir():
        return []
    with os.scandir(folder) as entries:
        return sorted(e.name for e in entries if _is_file(e))


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def _glob_kinds(
    folder: Path, kinds: dict[str, list[str]], names: list[str] | None = None
) -> dict[str, tuple[Path, ...]]:
    """The files of each kind of ``kinds`` in ``folder``; ``names``: its ``_files_in``, when listed already (a
    folder holding both kinds is listed once)."""
    found: dict[str, tuple[Path, ...]] = {}
    names = _files_in(folder) if names is None else names
    for kind in kinds:
        matcher = _MATCHERS[kind]
        hits = [n for n in names if matcher.match(n) and not _EXCLUDED.match(n)]
        if kind == "step_trace":
            hits = [n for n in hits if not n.startswith("step_trace_time")]
        if hits:
            found[kind] = tuple(folder / n for n in hits)
    return found


def _metadata(root: Path) -> dict[str, tuple[Path, ...]]:
    """The export's metadata files; the folder is listed once, and globbed below only for the folders that
    hold info.json (a glob lists its folder again)."""
    try:
        with os.scandir(root) as entries:
            names = sorted(e.name for e in entries)
    except OSError:  # a folder that cannot be listed holds nothing a glob would find either
        names = []
    meta: dict[str, tuple[Path, ...]] = {}
    info = [root / n for n in names if _INFO.match(n)]
    if info:
        meta["profiler_info"] = tuple(info)
    if (root / "profiler_metadata.json").is_file():
        meta["profiler_metadata"] = (root / "profiler_metadata.json",)
    device_info: list[Path] = []
    if any(n.startswith("device_") for n in names):
        device_info += sorted(root.glob("device_*/info.json*"))
    if any(n.startswith("PROF_") for n in names):
        device_info += sorted(root.glob("PROF_*/device_*/info.json*"))
    if device_info:
        meta["info_json"] = tuple(device_info)
    return meta


def _torch_source(root: Path) -> ExportSource | None:
    out = root / APO
    names = _files_in(out)
    text = _glob_kinds(out, _TEXT_KINDS, names)
    dbs = _glob_kinds(out, _DB_KINDS, names)
    files = {**text, **dbs}
    if not files:
        return None
    producer = "mindspore" if root.name.endswith("_ascend_ms") else "torch_npu"
    export_type = "text" if text else "db"
    return ExportSource("", root, "", producer, export_type, "ascend_profiler_output", files, _metadata(root))


def _msprof_source(root: Path) -> ExportSource | None:
    text = _glob_kinds(root / MSO, _TEXT_KINDS)
    dbs = _glob_kinds(root, _DB_KINDS)
    analyze = _glob_kinds(root / "analyze", {**_TEXT_KINDS, **_DB_KINDS})
    if text:
        files = {**text, **{k: v for k, v in analyze.items() if k not in text}}
        return ExportSource("", root, "", "msprof", "text", "mindstudio_profiler_output", files, _metadata(root))
    if dbs:
        return ExportSource("", root, "", "msprof", "db", "msprof_db", {**dbs, **analyze}, _metadata(root))
    return None


def _bare_source(folder: Path) -> ExportSource | None:
    names = _files_in(folder)
    text = _glob_kinds(folder, _TEXT_KINDS, names)
    dbs = _glob_kinds(folder, _DB_KINDS, names)
    if not text and not dbs:
        return None
    if dbs and not text:
        producer = "torch_npu" if "torch_db" in dbs else "msprof"
        return ExportSource("", folder, "", producer, "db", "bare_db", dbs, _metadata(folder))
    names = [p.name for paths in text.values() for p in paths]
    producer = "torch_npu" if any(n in ("kernel_details.csv", "trace_view.json") for n in names) else "msprof"
    return ExportSource("", folder, "", producer, "text", "bare_csv", {**text, **dbs}, _metadata(folder))


def _classify(folder: Path) -> ExportSource | None:
    """The export rooted at this folder, if it is one."""
    if (folder / APO).is_dir():
        return _torch_source(folder)
    if (folder / MSO).is_dir() or (folder.name.startswith("PROF_") and any(folder.glob("msprof_*.db"))):
        return _msprof_source(folder)
    if folder.name in (APO, MSO):
        return None  # handled from the parent
    return _bare_source(folder)


@dataclass(frozen=True)
class Unreadable:
    """A folder of the tree that could not be looked into: its path as printable text, and why."""

    path: str
    reason: str


# What ``scan`` finds under a path: its exports, and the folders that could not be read.
Scanned = tuple[list[ExportSource], list[Unreadable]]


def printable(path: Path | str) -> str:
    """A path as text that can be printed and stored: bytes that are not UTF-8 shown as \\xNN.

    >>> printable(Path(b"runs/bad\\xff".decode("utf-8", "surrogateescape")))
    'runs/bad\\\\xff'
    """
    return os.fsencode(str(path)).decode("utf-8", "backslashreplace")


def absent_reason(path: Path) -> str:
    """Why a path given on the command line cannot be opened: a dangling or looping link, or nothing there."""
    if path.is_symlink():
        return "a symbolic link that leads nowhere (a loop or a missing target)"
    return "no such file or folder"


def _is_decodable(path: Path) -> bool:
    """False for a path holding bytes that are not UTF-8 (Python keeps them as lone surrogates, which
    neither DuckDB nor a report can take)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _walk(path: Path, unreadable: list[Unreadable]) -> Iterator[ExportSource]:
    if not _is_decodable(path):  # read through a UTF-8 alias; labels and ids keep the real name (printable)
        alias = utf8_alias(path, _export_name(path))
        if alias is None:
            unreadable.append(Unreadable(printable(path), "folder name is not valid UTF-8 and no alias could be made"))
            return
        yield from _walk(alias, unreadable)
        return
    try:
        source = _classify(path)
        if source is None:
            children = sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError as exc:
        # The folder that could not be listed: the export's ASCEND_PROFILER_OUTPUT when that is the one (it
        # exists); this folder when a look inside it failed (a child that cannot even be looked at).
        failed = exc.filename if exc.filename and os.path.exists(exc.filename) else path
        unreadable.append(Unreadable(printable(failed), f"cannot be listed: {exc.strerror or exc}"))
        return
    if source is not None:
        yield source
        return  # an export's own subfolders (embedded PROF_*, FRAMEWORK) are part of it
    for child in children:
        yield from _walk(child, unreadable)


def _export_name(root: Path) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", printable(root.name)) or "export"


def _source_id(source: ExportSource, top: Path) -> tuple[str, str]:
    root = original(source.root)  # a folder read through a UTF-8 alias is named as itself
    rel = printable(root.relative_to(top).as_posix()) if root != top else "."
    return _export_name(root), rel


def _one_file_source(path: Path) -> ExportSource:
    """The export holding the file ``path``, restricted to that one file (and the export's metadata):
    a file path is never widened to the export around it. IngestError when no export holds it."""
    folder = path.parent.parent if path.parent.name in (APO, MSO) else path.parent
    source = _classify(folder)
    files: dict[str, tuple[Path, ...]] = {
        kind: (path,) for kind, paths in (source.files if source else {}).items() if path in paths
    }
    if source is None or not files:
        raise IngestError(
            "is a file that no reader takes (give an export folder, or one export file such as "
            "kernel_details.csv, op_summary_*.csv, trace_view.json, msprof_*.db, ascend_pytorch_profiler_*.db)",
            path,
        )
    sid = _export_name(source.root)
    export_type = "db" if set(files) <= set(_DB_KINDS) else "text"
    return ExportSource(
        sid, source.root, ".", source.producer, export_type, source.layout, files, source.metadata_files
    )


def discover(path: Path) -> list[ExportSource]:
    """Every export at or below ``path`` (``scan``), without the folders that could not be read."""
    return scan(path)[0]


def scan(path: Path) -> Scanned:
    """Every export at or below ``path``, in path order, each with a stable id, and the folders of the
    tree that could not be read (a name that is not UTF-8, a folder that cannot be listed).

    A file is read as its export holding only that file. An id is the export folder's name; when
    two exports in one scan share a name, each gets a short hash of its path relative to ``path``
    appended, so the id does not depend on where the tree lives on disk.
    """
    path = path.resolve()
    if path.is_file():
        return [_one_file_source(path)], []
    if path.name in (APO, MSO):
        path = path.parent
    unreadable: list[Unreadable] = []
    found = list(_walk(path, unreadable))
    ids = [_source_id(s, path) for s in found]
    counts: dict[str, int] = {}
    for sid, _ in ids:
        counts[sid] = counts.get(sid, 0) + 1
    out = []
    for source, (sid, rel) in zip(found, ids, strict=True):
        if counts[sid] > 1:
            sid = f"{sid}-{hashlib.sha1(rel.encode()).hexdigest()[:6]}"
        out.append(
            ExportSource(
                sid,
                source.root,
                rel,
                source.producer,
                source.export_type,
                source.layout,
                source.files,
                source.metadata_files,
            )
        )
    return out, unreadable
