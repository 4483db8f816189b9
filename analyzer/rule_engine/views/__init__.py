"""Documented helper views that rules may query (leading underscore, Perfetto style), created before rules run.

Each one is defined in a ``.sql`` module of this package with a doc comment for itself and for every
column it returns, with its DuckDB type (``definitions.py`` reads them; ``docs/rules.md`` is generated
from them). The ones marked ``@internal`` are steps of the others: rules may not read them (``rules
check``) and docs/rules.md leaves them out. Every view is derived from the normalized tables only and is
empty (never an error) when its inputs are empty. They are TEMP views, tables and macros, never written
into a saved database file.
"""

from __future__ import annotations

from analyzer.rule_engine.compute_task_types import COMPUTE_TASK_TYPES
from analyzer.rule_engine.views.build import create_views
from analyzer.rule_engine.views.definitions import helper_definitions, helper_modules

__all__ = ["COMPUTE_TASK_TYPES", "create_views", "helper_definitions", "helper_modules"]
