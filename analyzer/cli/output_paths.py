"""One check of every output path before a command does any work.

An output is refused (UsageError, exit 2, naming the option and the path) when it lies inside an
export the command reads (reports, databases and temporary files are never written there), when it
is a file where a folder belongs or a folder where a file belongs, when its folder cannot be
written, and, for an ingest database, when the file is something other than what the command would
extend. What a catalog file holds is checked once, where the batch opens it (``runs/catalog.open_catalog``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from analyzer.cli.usage import UsageError
from analyzer.duckdb_connect import connect_offline, is_duckdb_file
from analyzer.errors import first_line
from analyzer.ingest.metadata.discover import Scanned, printable, scan
from analyzer.ingest.model import ExportSource, IngestError

FOLDER = "folder"  # a folder the command writes files into (created when absent)
FILE = "file"  # one file, replaced atomically
DATABASE = "database"  # a DuckDB file of normalized tables (`ingest --db`), extended in place
CATALOG = "catalog"  # a batch catalog DuckDB file, extended in place

# Files extended in place (their own write permission matters).
_EXTENDED = (DATABASE, CATALOG)
# The table that marks an ingest database as ours; a DuckDB file without tables is as good as new.
_OWN_TABLE = "runs"


@dataclass(frozen=True)
class Output:
    """One output of a command: the option that names it (for messages), its path and what it is."""

    option: str
    path: Path
    kind: str


def exports_read(inputs: Iterable[Path | None]) -> list[ExportSource]:
    """The exports the command will read under its input paths (those it cannot read are its own
    business: the command reports them)."""
    return [source for path in inputs for source in (scan_input(path) or ([], []))[0]]


def scan_input(path: Path | None) -> Scanned | None:
    """What the command will read under one input path (``discover.scan``), for the output check and then
    for the command itself, so that the tree is walked once; None when there is nothing to scan there, or
    the path is the command's own business to report on."""
    if path is None or not Path(path).exists():
        return None
    _refuse_archive(Path(path))
    try:
        return scan(Path(path))
    except (IngestError, OSError):
        return None


def _refuse_archive(path: Path) -> None:
    """An archive given where an export belongs is the user's mistake, said before any work: what to do instead."""
    if path.is_file():
        from analyzer.runs.archives import is_archive  # only for a file given: archives are batch's

        if is_archive(path):
            raise UsageError(
                f"{printable(path)}: is an archive; this command reads an export folder or one of its files: unpack it "
                f"and give the folder, or catalogue it as it is with `npu-triage batch {printable(path)}` "
                "(docs/archives.md)"
            )


class InputFolder(Protocol):
    """A folder being read (an export, a log folder, a dump): nothing is ever written inside it."""

    @property
    def root(self) -> Path: ...


@dataclass(frozen=True)
class ReadFolder:
    """A folder being read, known by its path alone (a log folder, a dump, a reference)."""

    root: Path


def check_outputs(outputs: Iterable[Output], sources: Iterable[InputFolder] = ()) -> None:
    """Raise UsageError for the first output that must not be written (see the module docstring)."""
    # A set, looked up with each output's own parents: a tree of N exports has N run folders to
    # check, and comparing each with every root would cost N * N.
    roots = {Path(s.root).resolve() for s in sources}
    for output in outputs:
        where = f"{output.option} {output.path}"
        target = Path(output.path).resolve()
        inside = next((r for r in (target, *target.parents) if r in roots), None)
        if inside is not None:
            raise UsageError(
                f"{where}: lies inside the export folder {inside}, which is being read; nothing is ever written "
                f"inside an export (give {output.option} a path outside it)"
            )
        problem = _kind_problem(output) or _writable_problem(Path(output.path), output.kind)
        if problem:
            raise UsageError(f"{where}: {problem}")


def _kind_problem(output: Output) -> str | None:
    path = Path(output.path)
    if not path.exists():
        return None
    if output.kind == FOLDER:
        return None if path.is_dir() else "is a file, not a folder"
    if path.is_dir():
        return "is a folder, not a file"
    if output.kind == DATABASE:
        return _database_problem(path)
    return None


def _database_problem(path: Path) -> str | None:
    what = "a DuckDB file of `npu-triage ingest`"
    if not is_duckdb_file(path):
        return f"is not {what} (not a DuckDB file); give {what} or a new file"
    try:
        con = connect_offline(str(path), read_only=True, spill_now=False)
    except Exception as exc:  # a damaged file: DuckDB's own words
        if "lock" in str(exc).lower():
            return None  # in use by another process: the command itself says by which, when it opens it
        return f"cannot be opened: {first_line(exc)}"
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE NOT internal").fetchall()}
    finally:
        con.close()
    if tables and _OWN_TABLE not in tables:
        return f"is a DuckDB file but not {what} (no {_OWN_TABLE} table); give {what} or a new file"
    return None


def _writable_problem(path: Path, kind: str) -> str | None:
    """Why the output cannot be written where it is, or None."""
    if kind in _EXTENDED and path.is_file() and not os.access(path, os.W_OK):
        return "cannot be written (no write permission on the file, or a read-only file system)"
    folder = path if kind == FOLDER else path.parent
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"cannot be created: {existing} is a file, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"cannot be written: no write permission in {existing} (or a read-only file system)"
    return None
