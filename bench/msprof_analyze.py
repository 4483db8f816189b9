"""msprof-analyze 26.2.0 in its own venv: install it; check that it leaves its input untouched."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

VERSION = "26.2.0"


def venv_tool(venv: Path) -> Path:
    return venv / "bin" / "msprof-analyze"


def ensure_venv(venv: Path) -> Path:
    """The msprof-analyze executable, installed from PyPI into ``venv`` when missing."""
    tool = venv_tool(venv)
    if tool.exists():
        return tool
    print(f"installing msprof-analyze=={VERSION} into {venv} ...", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"msprof-analyze=={VERSION}"], check=True)
    return tool


def advisor_command(tool: Path, export: Path, out: Path) -> list[str]:
    return [str(tool), "advisor", "all", "-d", str(export), "-o", str(out), "-l", "en"]


# What msprof-analyze logs when it did not find the operator data (kernel_details.csv / op_summary).
_SKIPPED_OPERATORS = "not containing op summary"


def check_full_analysis(log: Path) -> None:
    """Stop the benchmark when msprof-analyze skipped its operator analyses (a comparison with a tool
    that did less work than asked would flatter npu-triage)."""
    text = log.read_text(errors="replace") if log.exists() else ""
    if _SKIPPED_OPERATORS in text:
        raise SystemExit(
            f"msprof-analyze found no operator data and skipped its operator analyses (see {log}); "
            "the comparison would not be like for like"
        )


def tree_digest(root: Path) -> str:
    """SHA-256 over every file's relative path, size and mtime under ``root`` (the tree's state)."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        stat = path.lstat()
        digest.update(f"{path.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()
