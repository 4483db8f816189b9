"""Many small CSV files read as one (ingest/csv/csv_joined): each line led by its file's number, files whose
lines might not be their rows refused, and a joined insert that does not give each file its lines undone."""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import pytest

from analyzer.ingest.csv import csv_group
from analyzer.ingest.csv.csv_joined import joined_lines
from analyzer.ingest.database import connect
from analyzer.ingest.loader import load_export
from analyzer.ingest.metadata.discover import scan
from analyzer.ingest.schema import TABLES
from analyzer.ingest.together.together import read_exports_together
from fixtures.generator.job_layout import write_job
from fixtures.generator.job_scenarios import job_plan


def _file(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "kernel_details.csv"
    path.write_bytes(data)
    return path


def test_each_line_is_led_by_its_file_number_and_ends_as_the_file_ends_lines(tmp_path):
    assert joined_lines(_file(tmp_path, b"a,b\n1,2\n3,4\n"), 7) == (b"7,1,2\n7,3,4\n", 2)
    assert joined_lines(_file(tmp_path, b"a,b\r\n1,2\r\n3,4"), 0) == (b"0,1,2\r\n0,3,4\r\n", 2)
    assert joined_lines(_file(tmp_path, b'a,b\n1,"x,y"\n'), 3) == (b'3,1,"x,y"\n', 1)
    assert joined_lines(_file(tmp_path, b"a,b\n"), 1) == (b"", 0)


@pytest.mark.parametrize(
    "data",
    [
        b"a,b\n1,2\n\n3,4\n",  # a blank line: a scan of the file alone skips it
        b"a,b\n1,2\n3,4\n\n",
        b"a,b\r\n1,2\n3,4\r\n",  # line ends of two kinds
        b"a,b\n1,2\r3,4\n",  # a lone CR
        b'"a\nb",c\n1,2\n',  # a header whose line break may be quoted
        b"a,b",  # no line below the header
    ],
)
def test_a_file_whose_lines_might_not_be_its_rows_is_refused(tmp_path, data):
    assert joined_lines(_file(tmp_path, data), 0) is None


def _tables(con) -> dict[str, list[tuple]]:
    return {name: con.execute(f"SELECT * FROM {name} ORDER BY ALL").fetchall() for name in TABLES}


def _alone(root: Path) -> tuple[dict, list[str]]:
    con = connect()
    problems = []
    for source in scan(root)[0]:
        problems += load_export(root, con=con, sources=[source]).problems
    return _tables(con), [p.line() for p in problems]


def _list_scans(monkeypatch) -> list[int]:
    """The sizes of the scans of a list of files (csv_group's usual way), recorded."""
    sizes: list[int] = []
    usual = csv_group._insert

    def counted(con, statement, group):
        sizes.append(len(group))
        return usual(con, statement, group)

    monkeypatch.setattr(csv_group, "_insert", counted)
    return sizes


@pytest.fixture
def job(tmp_path) -> Path:
    return write_job(job_plan("job_slow_rank", ranks=6, seed=23), tmp_path / "job", kernels=9)


@pytest.mark.slow
def test_a_clean_job_is_read_in_one_scan_a_kind_with_each_ranks_rows(job, monkeypatch):
    sizes = _list_scans(monkeypatch)
    ingested = load_export(job)
    assert sizes == []  # neither kernel_details nor step_trace_time went the usual way
    tables = _tables(ingested.con)
    assert len(tables["ops"]) == 6 * 3 * 9 and len(tables["steps"]) == 6 * 3
    assert (tables, [p.line() for p in ingested.problems]) == _alone(job)


@pytest.mark.slow
def test_a_quoted_line_break_undoes_the_joined_insert_and_the_files_go_the_usual_way(job, monkeypatch):
    kernels = sorted(job.glob("rank*/ASCEND_PROFILER_OUTPUT/kernel_details.csv"))[2]
    lines = kernels.read_bytes().split(b"\r\n")
    lines[4] = lines[4].replace(b"4096,4096", b"4096,\r\n4096", 1)  # a valid CSV row over two lines
    kernels.write_bytes(b"\r\n".join(lines))
    sizes = _list_scans(monkeypatch)
    con = connect()
    assert len(read_exports_together(con, scan(job)[0], frozenset()).done) == 6
    assert sizes == [6]  # the joined insert was undone, then the six files were read as a list
    assert con.execute("SELECT count(*) FROM ops WHERE input_shapes LIKE '%\n%'").fetchall() == [(1,)]
    assert _tables(con)["ops"] == _alone(job)[0]["ops"]


@pytest.mark.slow
def test_a_file_whose_lines_might_not_be_its_rows_is_left_to_a_scan_of_its_own(job, monkeypatch):
    kernels = sorted(job.glob("rank*/ASCEND_PROFILER_OUTPUT/kernel_details.csv"))[4]
    lines = kernels.read_bytes().split(b"\r\n")
    kernels.write_bytes(b"\r\n".join([*lines[:3], b"", *lines[3:]]))  # a blank line, which a scan skips
    sizes = _list_scans(monkeypatch)
    con = connect()
    assert len(read_exports_together(con, scan(job)[0], frozenset()).done) == 6
    assert sizes == [1]  # the five other files were joined
    assert _tables(con) == _alone(job)[0]


@pytest.mark.slow
def test_without_a_temporary_folder_the_files_are_read_as_a_list(job, monkeypatch, tmp_path):
    con = connect()  # its spill folder is made now
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "absent"))
    sizes = _list_scans(monkeypatch)
    assert len(read_exports_together(con, scan(job)[0], frozenset()).done) == 6
    assert sizes == [6, 6]
    monkeypatch.undo()
    assert _tables(con) == _alone(job)[0]


def _joined_left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("npu-triage-joined-*"))


@pytest.mark.slow
def test_the_joined_files_are_written_beside_the_connection_and_none_is_left(job, monkeypatch, tmp_path):
    con = connect()  # its spill folder is made now
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    writers: list[str] = []
    usual = csv_group.write_joined

    def recorded(paths, encoding):
        writers.append(threading.current_thread().name)
        return usual(paths, encoding)

    monkeypatch.setattr(csv_group, "write_joined", recorded)
    sizes = _list_scans(monkeypatch)
    assert len(read_exports_together(con, scan(job)[0], frozenset()).done) == 6
    assert sizes == [] and len(writers) == 2  # kernel_details and step_trace_time, joined
    assert threading.main_thread().name not in writers  # written by the thread that probes, not the connection's
    assert _joined_left(folder) == []
    monkeypatch.undo()
    assert _tables(con) == _alone(job)[0]


def test_a_read_that_stops_leaves_no_joined_file_behind(job, monkeypatch, tmp_path):
    con = connect()
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))

    def broken(*args):
        raise RuntimeError("stopped")

    monkeypatch.setattr(csv_group, "_read_group", broken)  # the first kind's insert stops the read together
    assert read_exports_together(con, scan(job)[0], frozenset()).done == {}
    assert _joined_left(folder) == []  # neither that kind's joined file nor the next kinds' written ahead
