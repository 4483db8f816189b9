"""Many exports read together (ingest/together, csv_group): the same tables and problems as each export
read alone, a damaged rank keeping its own messages without spoiling the others."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analyzer.ingest.database import connect
from analyzer.ingest.loader import load_export
from analyzer.ingest.metadata.discover import scan
from analyzer.ingest.schema import TABLES
from analyzer.ingest.together.together import read_exports_together
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan


def _tables(con) -> dict[str, list[tuple]]:
    return {name: con.execute(f"SELECT * FROM {name} ORDER BY ALL").fetchall() for name in TABLES}


def _alone(root: Path):
    """Every export of ``root`` read by itself (the per-export path), into one connection."""
    con = connect()
    problems = []
    for source in scan(root)[0]:
        problems += load_export(root, con=con, sources=[source]).problems
    return _tables(con), [p.line() for p in problems]


def _together(root: Path):
    ingested = load_export(root)
    return _tables(ingested.con), [p.line() for p in ingested.problems]


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    return write_job(job_plan("job_pipeline_imbalance", ranks=8, seed=17), tmp_path_factory.mktemp("job"), kernels=12)


def _kernels(rank: Path) -> Path:
    return rank / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"


@pytest.mark.slow
def test_a_job_read_together_gives_the_tables_of_each_rank_read_alone(job):
    sources = scan(job)[0]
    assert len(read_exports_together(connect(), sources, frozenset()).done) == len(sources) == 8
    tables, problems = _together(job)
    assert tables["ops"] and tables["steps"] and tables["comm_ops"] and len(tables["runs"]) == 8
    assert (tables, problems) == _alone(job)


def _damage(root: Path) -> list[Path]:
    ranks = sorted(p for p in root.iterdir() if p.is_dir())
    lines = _kernels(ranks[1]).read_text().splitlines(keepends=True)
    lines[3] = _bad_duration(lines[0], lines[3])
    _kernels(ranks[1]).write_text("".join(lines))
    data = _kernels(ranks[2]).read_bytes()
    _kernels(ranks[2]).write_bytes(data[: len(data) * 2 // 3])  # cut mid-row
    comm = ranks[3] / "ASCEND_PROFILER_OUTPUT" / "communication.json"
    comm.write_bytes(comm.read_bytes()[:100])
    steps = ranks[4] / "ASCEND_PROFILER_OUTPUT" / "step_trace_time.csv"
    rows = [line.split(",") for line in steps.read_text().splitlines()]
    gone = rows[0].index("Computing")
    steps.write_text("\n".join(",".join(c for i, c in enumerate(r) if i != gone) for r in rows) + "\n")
    return ranks


def _bad_duration(header: str, row: str) -> str:
    cells = row.split(",")
    cells[header.split(",").index("Duration(us)")] = "abc"
    return ",".join(cells)


@pytest.mark.slow  # a whole command or process: the full suite runs it
def test_a_damaged_rank_keeps_its_messages_and_spoils_no_other(job, tmp_path, monkeypatch):
    from analyzer.ingest.csv import csv_group
    from analyzer.ingest.together import together

    monkeypatch.setattr(csv_group, "_FILES_PER_SCAN", 3)  # several scans per group, damaged files among them
    monkeypatch.setattr(together, "_RUNS_PER_TABLE", 3)  # communication rows in several tables, a damaged file in one
    root = Path(shutil.copytree(job, tmp_path / "job"))
    ranks = _damage(root)
    sources = scan(root)[0]
    read = read_exports_together(connect(), sources, frozenset()).done
    damaged = {s.source_id for s in sources if s.root in ranks[1:5]}
    assert set(read) == {s.source_id for s in sources} - damaged
    tables, problems = _together(root)
    assert (tables, problems) == _alone(root)
    for rank, words in zip(ranks[1:5], ("not numbers", "ends mid-row", "not valid JSON", "'Computing'"), strict=True):
        assert any(rank.name in p and words in p for p in problems), (rank.name, words, problems)
    clean, _ = _together(job)
    good = {s.source_id for s in sources} - damaged
    for name in ("ops", "steps", "comm_ops", "runs"):
        assert [r for r in tables[name] if r[0] in good] == [r for r in clean[name] if r[0] in good]


def test_a_file_the_group_scan_cannot_read_goes_alone(job, tmp_path):
    """A file gone between the look at its head and the scan fails the group's statement: the halves are
    scanned again until it is alone, and only its run is left to the careful path."""
    from analyzer.ingest.csv import csv_group
    from analyzer.ingest.model import ReadContext
    from analyzer.ingest.together.grouped_kinds import group_read

    sources = scan(job)[0]
    files = [csv_group.RunFile(s.source_id, s.files["op_summary"][0], ReadContext(s.source_id, s)) for s in sources]
    probed = [(f, csv_group._clean_probe(f)) for f in files]
    gone = csv_group.RunFile(files[2].run_id, files[2].path.with_name("gone.csv"), files[2].ctx)
    probed[2] = (gone, probed[2][1])
    read = group_read("op_summary")
    con = connect()
    first = probed[0][1]
    sql = read.statement(first.path, list(first.columns), first.first_row, files[0].ctx.part(), True)
    types = read.types(list(first.columns))
    typed = {name: types.get(name, kind) for name, kind in first.columns.items()}
    assert csv_group._scan(con, csv_group.GroupStatement(read, sql, typed), probed) == {gone.run_id}
    held = {r[0] for r in con.execute("SELECT DISTINCT run_id FROM ops").fetchall()}
    assert held == {f.run_id for f in files} - {gone.run_id}


@pytest.mark.slow  # a tree read twice: the full suite, not the fast loop
def test_exports_with_a_timeline_are_read_together_whole():
    """Full exports (a timeline beside the CSVs): every kind, the timeline too, read together."""
    root = Path(__file__).parent.parent / "fixtures" / "examples" / "batch_sweep"
    sources = scan(root)[0]
    done = read_exports_together(connect(), sources, frozenset()).done
    assert len(done) == len(sources) > 1 and all("trace_view.json" in " ".join(c.files_read) for c in done.values())
    assert _together(root) == _alone(root)


@pytest.mark.slow
def test_a_rank_with_a_repeated_row_is_read_as_alone(job, tmp_path):
    """A row repeated in one rank's kernels (runs_to_recheck tells it by each row's hash) sends that rank to the
    per-run checks: its copy is dropped and said, as when it is read alone; the other ranks stay read together."""
    root = Path(shutil.copytree(job, tmp_path / "job"))
    rank = sorted(p for p in root.iterdir() if p.is_dir())[5]
    lines = _kernels(rank).read_text().splitlines(keepends=True)
    _kernels(rank).write_text("".join([*lines[:4], lines[3], *lines[4:]]))
    sources = scan(root)[0]
    read = read_exports_together(connect(), sources, frozenset()).done
    assert set(read) == {s.source_id for s in sources} - {s.source_id for s in sources if s.root == rank}
    tables, problems = _together(root)
    assert (tables, problems) == _alone(root)
    assert any(rank.name in p and "duplicate" in p.lower() for p in problems), problems
