"""csv_source: a file is read under the columns its header really names, whatever its line ends or width."""

from __future__ import annotations

import duckdb
import pytest

from analyzer.ingest.csv.csv_source import stream_csv
from tests.read_context import context_for

HEADER = ["Name", "Start Time(us)", "Duration(us)"] + [f"m{i}" for i in range(25)]


def _rows(n: int) -> list[str]:
    return [",".join([f"op{i}", f"{1736408883704643 + i}.000", "1.5"] + ["0.5"] * 25) for i in range(n)]


def _columns_read(tmp_path, data: bytes) -> tuple[int, int]:
    path = tmp_path / "kernel_details.csv"
    path.write_bytes(data)
    con = duckdb.connect()
    files = stream_csv(con, [path], context_for(tmp_path), lambda p, c, r: "SELECT count(*) FROM {scan}", {})
    return len(files[0].columns), files[0].rows


@pytest.mark.parametrize("end", ["\r", "\n", "\r\n"])
def test_csv_source_header_is_its_first_line_whatever_the_line_end(tmp_path, end):
    """A CR-only file once had its whole first 64 KiB taken for the header: thousands of phantom columns."""
    data = end.join([",".join(HEADER), *_rows(2000)]) + end
    assert _columns_read(tmp_path, data.encode()) == (len(HEADER), 2000)


def test_csv_source_header_wider_than_the_first_bytes_is_read_whole(tmp_path):
    header = HEADER + [f"extra_metric_{i}(us)" for i in range(5000)]
    row = ",".join([*_rows(1)[0].split(","), *["1"] * 5000])
    data = "\n".join([",".join(header), row, row]) + "\n"
    assert _columns_read(tmp_path, data.encode()) == (len(header), 2)
