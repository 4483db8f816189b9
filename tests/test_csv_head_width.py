"""csv_shape.short_in_head: the same answer as short_rows over sample_rows, parsing only as far as it needs."""

from __future__ import annotations

import csv

import pytest

from analyzer.ingest.csv.csv_shape import sample_rows, short_in_head, short_rows

HEADER = b"a,b,c\n"
HEADS = {
    "full rows": HEADER + b"1,2,3\n4,5,6\n",
    "every row short": HEADER + b"1,2\n4,5\n",
    "short then full": HEADER + b"1,2\n4,5,6\n",
    "full then short": HEADER + b"1,2,3\n4\n",
    "wider than the header": HEADER + b"1,2,3,4\n",
    "blank lines only": HEADER + b"\n\n",
    "header only": HEADER,
    "no line end at all": b"a,b,c",
    "cut last row": HEADER + b"1,2\n4,5,6",
    "quoted newline": HEADER + b'1,"x\ny",3\n',
    "open quote to the end": HEADER + b'1,"x\n2,3\n',
    "CR line ends": b"a,b,c\r1,2\r",
    "latin-1 bytes": HEADER + b"1,\xe9,3\n",
}


@pytest.mark.parametrize("name", sorted(HEADS))
def test_same_answer_as_the_whole_sample(name: str) -> None:
    data = HEADS[name]
    encoding = "latin-1" if name.startswith("latin") else "utf-8"
    rows = sample_rows(data, encoding)
    for columns in (1, 2, 3, 4):
        assert short_in_head(columns, data, encoding) == short_rows(["x"] * columns, rows), (name, columns)


def test_a_parse_error_after_short_rows_gives_no_answer_like_the_sample() -> None:
    """sample_rows has no rows when csv cannot parse the head: then nothing is short, even if the rows
    before the error were."""
    limit = csv.field_size_limit()
    data = HEADER + b"1,2\n" + b"x" * (limit + 10) + b",2,3\n"
    assert sample_rows(data, "utf-8") == []
    assert short_in_head(3, data, "utf-8") is None
