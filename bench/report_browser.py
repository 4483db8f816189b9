"""The HTML report of a generated big run: size, render time and draw time in headless Chromium.

    python -m bench.report_browser [--tasks 2000000] [--repeat 3]

Targets (issue 4): under 30 MB and drawn in under 10 s; exits 1 when either is missed. The run is
built in DuckDB with range() (no files). Timing lives here, not in the test suite.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from analyzer.ingest.database import connect
from analyzer.report.html import write_html
from tests.headless_chromium import INSTALL_HINT, chromium, missing_browser, open_and_wait
from tests.report_cases import add_big_run

SIZE_LIMIT_MB = 30.0
DRAW_LIMIT_S = 10.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="page loads; the first (cold) and the best are shown")
    args = parser.parse_args(argv)
    if reason := missing_browser():
        print(f"cannot run: {reason} ({INSTALL_HINT})", file=sys.stderr)
        return 2
    con = connect()
    started = time.monotonic()
    diagnosis = add_big_run(con, args.tasks)
    build_s = time.monotonic() - started
    with tempfile.TemporaryDirectory(prefix="npu-triage-bench-") as tmp:
        started = time.monotonic()
        page = write_html(diagnosis, con, Path(tmp) / "report.html")
        render_s = time.monotonic() - started
        size_mb = page.stat().st_size / 1e6
        with chromium() as driver:
            draws = [open_and_wait(driver, page) for _ in range(max(1, args.repeat))]
    load = os.getloadavg()[0]
    print(
        f"{args.tasks:,} tasks: built {build_s:.2f} s, render_html {render_s:.2f} s, {size_mb:.2f} MB, "
        f"Chromium draw first {draws[0]:.2f} s, best {min(draws):.2f} s (load average {load:.1f})"
    )
    ok = size_mb < SIZE_LIMIT_MB and draws[0] < DRAW_LIMIT_S
    print("targets met" if ok else f"targets missed: size < {SIZE_LIMIT_MB} MB and first draw < {DRAW_LIMIT_S} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
