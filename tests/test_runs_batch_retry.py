"""A batch never loses a failure of the machinery (issue 45): a run lost with its worker is recorded as an
infrastructure failure, the batch exits 3, and the next batch tries it again instead of skipping it as known."""

from __future__ import annotations

from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import duckdb
import pytest

from analyzer.cli.batch_cmd import _report
from analyzer.runs.batch import run_batch
from analyzer.runs.catalog import open_catalog
from analyzer.runs.executor import LocalPool
from analyzer.runs.work import INFRASTRUCTURE, WorkSettings
from tests.tiny_exports import write_tiny_export


class _OneWorkerLost:
    """The local pool of one process, whose worker dies on the first item (as a killed worker, a lost
    scheduler, a worker that cannot import the package give the driver an exception instead of a result)."""

    slots = 1

    def completed(self, fn, items, *args):
        for i, item in enumerate(items):
            yield (
                item,
                (
                    BrokenProcessPool("A process in the process pool was terminated abruptly")
                    if i == 0
                    else fn(item, *args)
                ),
            )


def _failures(catalog: Path) -> list[tuple[str, str]]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        return con.execute("SELECT path, message FROM failures ORDER BY path").fetchall()
    finally:
        con.close()


@pytest.mark.slow
def test_a_run_lost_with_its_worker_exits_3_and_is_tried_again_by_the_next_batch(tmp_path, capsys):
    for i in range(2):
        write_tiny_export(tmp_path / "runs" / f"run_{i}", seed=i, steps=4)
    catalog, settings = tmp_path / "c.duckdb", WorkSettings(diagnose=False)
    con = open_catalog(catalog)
    outcome = run_batch(tmp_path / "runs", con, settings, _OneWorkerLost())
    con.close()
    assert _report(outcome, catalog) == 3
    ((path, message),) = _failures(catalog)
    assert message.startswith(f"{INFRASTRUCTURE}worker process failed: BrokenProcessPool")
    assert "the machinery lost some exports" in capsys.readouterr().err

    con = open_catalog(catalog)
    again = run_batch(tmp_path / "runs", con, settings, LocalPool(1))
    con.close()
    assert again.catalogued == [path] and len(again.skipped) == 1  # the lost one again, the other known
    assert _failures(catalog) == [] and _report(again, catalog) == 0
