"""What the command line imports: a diagnosis written as JSON never loads plotly or polars, and neither does the
parser of every command (`npu-triage --help`); the page modules load them when a page is drawn, but not DuckDB,
which a report worker drawing pages from the series read for it never needs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_CHECK = """
import sys
from analyzer.cli import main
from analyzer.cli.commands import all_modules
code = main(["diagnose", sys.argv[1], "--format", "json", "--out", sys.argv[2], "--quiet"])
all_modules()
print(code, sorted({m.split(".")[0] for m in sys.modules} & {"plotly", "polars"}))
"""


def _last_line(script: str, example: str, out: Path) -> str:
    """The last line ``script`` prints, run in a fresh interpreter on an example (argv: example, out folder)."""
    run = subprocess.run(
        [sys.executable, "-c", script, str(ROOT / "fixtures" / "examples" / example), str(out)],
        capture_output=True, text=True, cwd=ROOT, check=False, timeout=120,
    )  # fmt: skip
    assert run.stdout, run.stderr
    return run.stdout.split("\n")[-2]


@pytest.mark.slow
def test_json_diagnosis_and_every_command_parser_load_no_plotting_library(tmp_path):
    assert _last_line(_CHECK, "job_slow_rank", tmp_path / "out") == "0 []"
    assert (tmp_path / "out" / "job_slow_rank" / "diagnosis.json").is_file()


_ONE_EXPORT = """
import sys
from analyzer.cli import main
code = main(["diagnose", sys.argv[1], "--format", "json,md", "--out", sys.argv[2], "--quiet"])
print(code, sorted({m.split(".")[0] for m in sys.modules} & {"numpy", "pyarrow", "polars", "plotly"}))
"""


@pytest.mark.slow
def test_one_export_diagnosed_as_json_and_markdown_loads_no_arrow_or_numpy(tmp_path):
    # pyarrow and numpy are slow to import, and a single export needs neither: only the readers of
    # many exports, jobs and the table API load them
    assert _last_line(_ONE_EXPORT, "resnet_host_sync", tmp_path / "out") == "0 []"


_PAGE_WORKER = """
import sys
from analyzer.api.report_pool import _start, write_pages
import analyzer.report.html  # what a report worker imports to draw pages (_start with html)
print(sorted({m.split(".")[0] for m in sys.modules} & {"duckdb", "pyarrow"}), "analyzer.ingest" in sys.modules)
"""


@pytest.mark.slow
def test_a_report_worker_drawing_pages_loads_no_duckdb():
    # each report worker is a fresh interpreter: DuckDB's import is a tenth of a second of its start
    run = subprocess.run([sys.executable, "-c", _PAGE_WORKER], capture_output=True, text=True, check=False, timeout=120)
    assert run.stdout.strip() == "[] False", run.stderr
