"""The chart builders' numbers computed without a polars expression per chart are polars' own numbers."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from analyzer.report.charts import _FEW_VALUES, _scaled, column_lists, rows_equal, rows_where


def _values() -> pl.Series:
    rng = np.random.default_rng(7)
    ties = np.arange(-2000, 2000) * 0.00005  # halfway cases at 4 decimals after a 1e-3 scale, and their neighbours
    edges = [float("nan"), float("inf"), -float("inf"), 1.7e308, -1.7e308, -0.0, 5e-324, 0.5, 2.5]
    return pl.Series(np.concatenate([rng.random(20_000) * 1e6, ties, np.arange(4000) * 0.5, edges]))


@pytest.mark.parametrize(("factor", "digits"), [(1e-3, 4), (100, 4), (1.0, 3), (1e-6, 6)])
def test_scaled_is_polars_round(factor: float, digits: int) -> None:
    values = _values()
    expected = (values.cast(pl.Float64) * factor).round(digits).to_list()
    got = _scaled(values, factor, digits)
    assert [repr(v) for v in got] == [repr(v) for v in expected]  # repr: -0.0, nan and inf compared too


@pytest.mark.parametrize(("factor", "digits"), [(1e-3, 4), (100, 4), (1.0, 3), (1e-6, 6)])
def test_scaled_of_few_values_is_polars_round(factor: float, digits: int) -> None:
    """A series of a few values (made one by one, not by numpy) gives polars' numbers too."""
    values = _values().extend(pl.Series([None, 1.0]))
    parts = [values.slice(start, _FEW_VALUES) for start in range(0, values.len(), _FEW_VALUES)]
    expected = [(part.cast(pl.Float64) * factor).round(digits).to_list() for part in parts]
    got = [_scaled(part, factor, digits) for part in parts]
    assert [[repr(v) for v in part] for part in got] == [[repr(v) for v in part] for part in expected]


def test_scaled_keeps_nulls_and_integers() -> None:
    ints = pl.Series([1234567, None, 5, -15, None], dtype=pl.Int64)
    assert (
        _scaled(ints, 1e-3)
        == (ints.cast(pl.Float64) * 1e-3).round(4).to_list()
        == [1234.567, None, 0.005, -0.015, None]
    )
    assert _scaled(pl.Series([], dtype=pl.Float64), 1e-3) == []
    assert _scaled(pl.Series([None, None], dtype=pl.Float64), 2.0) == [None, None]


def test_rows_where_is_polars_filter_as_lists() -> None:
    table = pl.DataFrame({"x": [3, None, 1, 2], "y": ["a", "b", None, "d"], "z": [0.5, float("nan"), None, 2.0]})
    keep = [True, True, False, True]
    expected = table.filter(pl.Series(keep)).to_dict(as_series=False)
    columns = column_lists(table)
    assert repr(rows_where(columns, keep)) == repr(expected)
    assert repr(rows_where(columns, keep, ["z", "x"])) == repr({"z": expected["z"], "x": expected["x"]})
    assert rows_where(columns, [False] * 4) == {"x": [], "y": [], "z": []}
    assert rows_equal(columns, "y", "b", ["x"]) == {"x": [None]}
