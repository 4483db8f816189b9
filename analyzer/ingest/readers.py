"""The registry of file readers: file kind (as discovery names it) -> function filling normalized tables.

Every reader has the signature ``reader(con, paths, ctx) -> object`` and inserts into the
normalized tables ``BY NAME`` with ``run_id = ctx.run_id``. Readers report problems through
``ctx.report`` and never raise for bad content. Order matters only for readers that use rows
of another (none do: cross-table derivations live in ``finalize.py``).
"""

from __future__ import annotations

from analyzer.ingest.op_summary import load_op_summary

READERS = {
    "op_summary": load_op_summary,
}
