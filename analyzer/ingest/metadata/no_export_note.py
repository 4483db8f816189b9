"""What a folder in which discovery finds no export holds instead, and what to give npu-triage: the end of the
'no export found' message.

Two things are often given in an export's place: a collection never exported (``raw_collections.py``), and the
output of msprof-analyze, which writes its cluster analysis into a folder ``cluster_analysis_output`` (inside the
folder it analysed, or under its ``-o``), never an export of its own.
"""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest.metadata.discover import printable
from analyzer.ingest.metadata.raw_collections import folders_below, unexported_note

ANALYSIS_OUTPUT = "cluster_analysis_output"
# Folders looked into below the path given for msprof-analyze's output (the -o folder holds it one level down).
_DEPTH = 2


def no_export_note(path: Path) -> str:
    """The note appended to 'no export found' for ``path``: '' when it holds nothing npu-triage recognises (or is
    not a folder)."""
    if not path.is_dir():
        return ""
    return unexported_note(path) or analysis_output_note(path)


def analysis_output_note(path: Path) -> str:
    """The note of a folder that is (or holds) msprof-analyze's output: '' when it is not."""
    found = _analysis_output(path)
    if found is None:
        return ""
    return (
        f"; {printable(found)} is msprof-analyze's output, not an export: give npu-triage the folder msprof-analyze "
        "was given (its -d), which holds the ranks' exports (npu-triage analyses the job itself)"
    )


def _analysis_output(path: Path) -> Path | None:
    """The first folder named ANALYSIS_OUTPUT at ``path`` or ``_DEPTH`` levels below it, in path order."""
    return next((folder for folder, _ in folders_below(path, _DEPTH) if folder.name == ANALYSIS_OUTPUT), None)
