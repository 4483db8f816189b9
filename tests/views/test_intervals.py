"""intervals.sql: the interval algebra's macros over an inline relation of keyed half-open intervals."""

from __future__ import annotations

from tests.views.view_case import module_database, rows

con = module_database()

# Key 'a': overlapping, touching ([15,20) touches [10,15)), contained, then apart; rows without a start,
# without an end, or ending before they start are left out. Key NULL is a key of its own.
SRC = """
WITH src AS (SELECT * FROM (VALUES
    ('a', 1, 0, 10), ('a', 2, 5, 15), ('a', 3, 15, 20),
    ('a', 4, 30, 100), ('a', 5, 40, 50), ('a', 6, 60, 70),
    ('a', 7, NULL, 5), ('a', 8, 200, NULL), ('a', 9, 300, 290),
    ('b', 10, 0, 4),
    (NULL, 11, 7, 9)
) t(key, rid, start_ns, end_ns))
"""


def test_intervals_merged_gives_disjoint_islands_per_key(con):
    assert rows(con, SRC + "SELECT * FROM _intervals_merged(src) ORDER BY key NULLS LAST, interval_no") == [
        ("a", 1, 0, 20, 0.02, 3),
        ("a", 2, 30, 100, 0.07, 3),
        ("b", 1, 0, 4, 0.004, 1),
        (None, 1, 7, 9, 0.002, 1),
    ]


def test_intervals_union_length_is_the_merged_length(con):
    assert rows(con, SRC + "SELECT * FROM _intervals_union_length(src) ORDER BY key NULLS LAST") == [
        ("a", 0.09, 6),
        ("b", 0.004, 1),
        (None, 0.002, 1),
    ]


def test_intervals_gaps_open_where_a_row_starts_after_every_earlier_one_ended(con):
    # The caller filters invalid rows; of rows tied on start and end, the lower rid comes first.
    gaps = """
    WITH src AS (SELECT * FROM (VALUES
        ('a', 1, 0, 10), ('a', 2, 5, 30), ('a', 3, 20, 25), ('a', 4, 40, 50), ('a', 5, 40, 45),
        ('a', 6, 60, 70), ('a', 7, 60, 70), ('a', 8, 70, 80), ('b', 9, 0, 5), ('b', 10, 9, 10)
    ) t(key, rid, start_ns, end_ns))
    SELECT * FROM _intervals_gaps(src) ORDER BY key, start_ns
    """
    assert rows(con, gaps) == [
        ("a", 30, 40, 2, 5),
        ("a", 50, 60, 4, 6),
        ("b", 5, 9, 9, 10),
    ]
