"""plain_value: a query's values made JSON-friendly; the values of the exact types it returns at once are unchanged."""

from __future__ import annotations

import math
from datetime import date, datetime
from decimal import Decimal

from analyzer.rule_engine.runner import plain_value


class _Text(str):
    """A str subclass: not one of the exact types returned at once, still returned as it is."""


def test_plain_values_as_they_are():
    for value in ("x", "", 0, -3, 2**70, True, False, None, _Text("t")):
        assert plain_value(value) is value


def test_other_values_converted_item_by_item():
    assert plain_value(Decimal("1.25")) == 1.25 and isinstance(plain_value(Decimal("1.25")), float)
    assert plain_value(math.nan) is None and plain_value(-math.inf) is None and plain_value(0.5) == 0.5
    assert plain_value(date(2025, 1, 2)) == "2025-01-02"
    assert plain_value(datetime(2025, 1, 2, 3, 4, 5)) == "2025-01-02T03:04:05"
    assert plain_value((1, Decimal("2.5"), [math.inf, "a"])) == [1, 2.5, [None, "a"]]
    assert plain_value({1: Decimal("3"), "k": {"n": math.nan}}) == {"1": 3.0, "k": {"n": None}}
