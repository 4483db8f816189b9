"""The task types the helper ``_compute_tasks`` (views/tasks.sql) counts as computing, outside the views package so
that a page renderer names them without loading the views' builder (and DuckDB with it)."""

from __future__ import annotations

# The task types _compute_tasks (tasks.sql) counts as computing; charts name them when there are none.
COMPUTE_TASK_TYPES = ("AI_CORE", "AI_VECTOR_CORE", "MIX_AIC", "MIX_AIV", "AI_CPU")
