"""csv_anchor: the first data row's decimal under the time headers, or None."""

from __future__ import annotations

from decimal import Decimal

from analyzer.ingest.csv.csv_anchor import ns_anchor
from analyzer.ingest.csv.csv_shape import sample_rows

COLUMNS = ["Name", "Start Time(us)", "Stop(us)"]


def _row(tmp_path, text: str) -> list[str]:
    """The first data row of a file holding ``text``, as stream_csv hands it to the readers."""
    path = tmp_path / "kernel_details.csv"
    path.write_bytes(text.encode("utf-8"))
    return (sample_rows(path.read_bytes(), "utf-8") or [[]])[0]


def test_anchor_is_the_first_rows_start(tmp_path):
    row = _row(tmp_path, 'Name,Start Time(us),Stop(us)\n"a,b",1736408883704643.212\t,7\n1,2,3\n')
    assert ns_anchor(row, COLUMNS, ["Start Time(us)"]) == Decimal("1736408883704643.212")


def test_anchor_falls_back_to_the_next_header_then_none(tmp_path):
    row = _row(tmp_path, "Name,Start Time(us),Stop(us)\nx,N/A,12.5\n")
    assert ns_anchor(row, COLUMNS, ["Start Time(us)", "Stop(us)"]) == Decimal("12.5")
    assert ns_anchor(row, COLUMNS, ["Start Time(us)"]) is None
    assert ns_anchor(row, COLUMNS, ["Task Start Time"]) is None  # no such header


def test_no_anchor_without_a_data_row_or_in_a_short_one(tmp_path):
    assert ns_anchor(_row(tmp_path, "Name,Start Time(us),Stop(us)\n"), COLUMNS, ["Stop(us)"]) is None
    assert ns_anchor(_row(tmp_path, "Name,Start Time(us),Stop(us)\nx\n"), COLUMNS, ["Stop(us)"]) is None
    assert ns_anchor(_row(tmp_path, "Name,Start Time(us)\nx,nan\n"), COLUMNS, ["Start Time(us)"]) is None
