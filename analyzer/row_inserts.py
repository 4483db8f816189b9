"""Rows made in Python inserted in one statement: DuckDB's ``executemany`` runs one statement a row.

Each column goes as one list parameter and the lists are unnested side by side, so a thousand rows cost one
statement, not a thousand. The rows keep their order.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb


def insert_values(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Sequence[object]]) -> None:
    """Insert ``rows`` (each a value per column of ``table``, in its order) into ``table``, in their order;
    nothing for no rows. The values are cast to the table's column types as an INSERT casts them."""
    if not rows:
        return
    width = len(rows[0])
    columns = [[row[i] for row in rows] for i in range(width)]
    # unnests of one SELECT list advance together: row k takes the k-th value of every list
    select = ", ".join(f"unnest(${i})" for i in range(1, width + 1))
    con.execute(f"INSERT INTO {table} SELECT {select}", columns)
