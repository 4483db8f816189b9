"""npu-triage batch keeps the findings of the logs found beside each export in the catalog (log_findings)."""

from __future__ import annotations

import shutil

import pytest

from analyzer.cli import main
from analyzer.runs.catalog import open_catalog
from fixtures.logs.failed_op import write_failed_op

# The whole command over generated inputs: in the full suite, not the fast loop.
pytestmark = pytest.mark.slow


def test_batch_records_log_findings_per_run_and_query_reads_them(tmp_path, capsys):
    tree = tmp_path / "tree"
    truths = {r: write_failed_op(tree / f"rank_{r}", seed=s) for r, s in ((0, 5), (1, 6))}
    other = write_failed_op(tmp_path / "other", seed=7)  # its export alone, with no log beside it
    shutil.copytree(tmp_path / "other" / "failed_op" / other["export"], tree / "nologs" / other["export"])
    catalog = tmp_path / "cat.duckdb"
    assert main(["batch", str(tree), "--catalog", str(catalog), "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "logs found beside" in line]
    assert len(said) == 2 and not [line for line in said if "nologs" in line]
    con = open_catalog(catalog, read_only=True)
    rows = con.execute(
        "SELECT r.path, l.logs, l.rank, l.code, l.subject, json_extract_string(l.details, '$.dump_path') "
        "FROM log_findings l JOIN catalog_runs r USING (run_id) WHERE l.rank = 1 ORDER BY r.path"
    ).fetchall()
    runs = con.execute("SELECT count(*) FROM catalog_runs").fetchall()[0][0]
    con.close()
    assert runs == 3
    assert [(p.split("/")[0], logs, code, subject, dump) for p, logs, _, code, subject, dump in rows] == [
        (f"rank_{r}", "../log", "LOG001", truths[r]["kernel"], truths[r]["dump_path"]) for r in (0, 1)
    ]
    # queryable with npu-triage query; a second batch adds nothing twice
    assert main(["batch", str(tree), "--catalog", str(catalog), "--jobs", "1"]) == 0
    capsys.readouterr()
    assert (
        main(["query", str(catalog), "SELECT code, count(*) AS n FROM log_findings GROUP BY code ORDER BY code"]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("\t") == ["code", "n"] and "LOG001\t2" in lines
