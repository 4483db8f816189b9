"""Data classes that ingest hands around: an export found on disk, a problem met, a reading context."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from analyzer.errors import TriageError
from analyzer.visible_text import visible
from analyzer.vocabulary import ProblemSeverity


@dataclass(frozen=True)
class ExportSource:
    """One export folder found by discovery, before it is read.

    ``files`` maps a file kind (``op_summary``, ``timeline``, ``torch_db``, ...) to the paths of
    that kind, slices included, sorted by name.
    """

    source_id: str
    root: Path
    rel_path: str
    producer: str
    export_type: str
    layout: str
    files: dict[str, tuple[Path, ...]]
    metadata_files: dict[str, tuple[Path, ...]] = field(default_factory=dict)

    def has(self, kind: str) -> bool:
        return bool(self.files.get(kind))

    def rel(self, path: Path) -> str:
        """Path of a file relative to the export folder, for messages."""
        text, root = str(path), str(self.root)
        if text[len(root) : len(root) + 1] == "/" and text.startswith(root):  # inside: what relative_to gives
            return text[len(root) + 1 :]
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.name


@dataclass(frozen=True)
class Problem:
    """One problem met while reading: where, what, and what to do. A problem may quote a cell of its file (a value
    DuckDB could not convert): its control characters are written as ``\\xNN`` (visible_text.py) wherever the
    problem is shown or stored."""

    file: str
    location: str
    severity: ProblemSeverity
    problem: str
    hint: str = ""

    def __post_init__(self) -> None:
        for name in ("file", "location", "problem", "hint"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, visible(value))

    def line(self) -> str:
        """``severity: file:location: problem (hint)``; a problem of the whole export names '(export)'."""
        file = self.file or "(export)"
        where = f"{file}:{self.location}" if self.location else file
        hint = f" ({self.hint})" if self.hint else ""
        return f"{self.severity}: {where}: {self.problem}{hint}"


@dataclass
class ReadContext:
    """What a reader needs to know while it reads one export: its run id, its source, and a problem log."""

    run_id: str
    source: ExportSource
    problems: list[Problem] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)
    # Run metadata found inside data files (e.g. chip from a DB's NPU_INFO), keyed by RunMetadata
    # field name; finalize uses a fact where the metadata files left the field unknown.
    facts: dict[str, object] = field(default_factory=dict)
    # Timeline kinds the readers leave out, as the caller will never read them (``load_export``).
    left_out_kinds: frozenset[str] = frozenset()

    def report(self, path: Path | str, location: str, severity: ProblemSeverity, problem: str, hint: str = "") -> None:
        name = self.source.rel(path) if isinstance(path, Path) else path
        self.problems.append(Problem(name, location, severity, problem, hint))

    def mark_read(self, path: Path) -> None:
        rel = self.source.rel(path)
        if rel not in self.files_read:
            self.files_read.append(rel)

    def part(self) -> ReadContext:
        """An empty context for one reader of the same export (its problems are taken over in reader order)."""
        return ReadContext(run_id=self.run_id, source=self.source, left_out_kinds=self.left_out_kinds)

    def absorb(self, part: ReadContext) -> None:
        """Take over what a reader's part context recorded (problems, files read, facts)."""
        self.problems.extend(part.problems)
        for rel in part.files_read:
            if rel not in self.files_read:
                self.files_read.append(rel)
        self.facts.update(part.facts)


class IngestError(TriageError):
    """Raised when a path holds nothing usable. The message is meant for the user."""
