"""Which runs are of one model: model name, op mix of a typical step, input shapes (batch dimension left out).

Read from catalog-shaped tables (``catalog_runs``, ``op_positions``), so the diff, the sweep and the
rule judging batch-size scaling judge identity alike. Two runs are one model when their names do not
disagree, their typical steps share at least MIN_OP_MIX_OVERLAP of their ops (by type), the op
types both have occur about as often per step (MIN_SHARED_COUNT_AGREEMENT), and their
input shapes, with each tensor's leading (batch) dimension left out, overlap by at least
MIN_SHAPE_OVERLAP. What a run did not record (op types of a Level0 export, shapes) is not
compared. A CANN upgrade that adds a few format conversions stays one model; a deeper
variant or another network does not.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import duckdb

from analyzer.ingest.sql_values import in_list
from analyzer.row_inserts import insert_values

MIN_OP_MIX_OVERLAP = 0.6
MIN_SHARED_COUNT_AGREEMENT = 0.9  # the op types both have occur about as often per step (same depth)
MIN_SHAPE_OVERLAP = 0.3
IDENTITY_TABLE = "run_model_identity"


@dataclass(frozen=True)
class ModelIdentity:
    """What identifies the model of one run."""

    run_id: str
    name: str | None
    ops: dict[str, int]  # op type -> positions of that type in a typical step (empty: no op types recorded)
    shapes: frozenset[str]  # input shapes at those positions, batch dimension left out


def without_batch_dim(shapes: str) -> str:
    """Input shapes with each tensor's leading dimension left out (it is the batch size in most).

    >>> without_batch_dim("32,4,56,56,16;1,4,1,1,16"), without_batch_dim("8")
    ('4,56,56,16;4,1,1,16', '')
    """
    return ";".join(",".join(t.split(",")[1:]) for t in shapes.split(";"))


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    rows = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [name]).fetchall()
    views = con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [name]).fetchall()
    return bool(rows[0][0] or views[0][0])


def load_identities(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> list[ModelIdentity]:
    """The identity of each run (in ``run_ids`` order) from ``catalog_runs`` and ``op_positions``."""
    names = dict(
        con.execute(f"SELECT run_id, model_name FROM catalog_runs WHERE {in_list('run_id')}", [run_ids]).fetchall()
    )
    ops: dict[str, Counter] = {r: Counter() for r in run_ids}
    shapes: dict[str, set[str]] = {r: set() for r in run_ids}
    if _has_table(con, "op_positions"):
        rows = con.execute(
            "SELECT run_id, op_type, input_shapes, count(*) FROM op_positions "
            f"WHERE {in_list('run_id')} GROUP BY ALL ORDER BY ALL",
            [run_ids],
        ).fetchall()
        for run_id, op_type, shape, count in rows:
            if op_type and not op_type.startswith("["):  # '[AI_CORE]': the export recorded no op type
                ops[run_id][op_type] += count
            if shape:
                shapes[run_id].add(without_batch_dim(shape))
    return [ModelIdentity(r, names.get(r) or None, dict(ops[r]), frozenset(shapes[r])) for r in run_ids]


def model_difference(a: ModelIdentity, b: ModelIdentity) -> str | None:
    """Why the two runs are not of one model (a sentence), or None when they are."""
    if a.name and b.name and a.name != b.name:
        return f"the model names differ ({a.name} vs {b.name})"
    if a.ops and b.ops:
        common = sum(min(n, b.ops.get(t, 0)) for t, n in a.ops.items())
        overlap = common / max(sum(a.ops.values()), sum(b.ops.values()))
        if overlap < MIN_OP_MIX_OVERLAP:
            return (
                f"their typical steps share only {overlap:.0%} of their ops "
                f"({sum(a.ops.values())} vs {sum(b.ops.values())} ops per step)"
            )
        shared = sorted(set(a.ops) & set(b.ops), key=lambda t: (-abs(a.ops[t] - b.ops[t]), t))
        agreement = sum(min(a.ops[t], b.ops[t]) for t in shared) / max(1, sum(max(a.ops[t], b.ops[t]) for t in shared))
        if shared and agreement < MIN_SHARED_COUNT_AGREEMENT:
            t = shared[0]
            return (
                f"the op types they share occur in different numbers per step ({t} {a.ops[t]} vs {b.ops[t]}; "
                f"{sum(a.ops.values())} vs {sum(b.ops.values())} ops per step): another depth or variant"
            )
    if a.shapes and b.shapes:
        in_common = len(a.shapes & b.shapes) / len(a.shapes | b.shapes)
        if in_common < MIN_SHAPE_OVERLAP:
            return f"their input shapes differ (only {in_common:.0%} in common, batch dimension left out)"
    return None


def group_models(identities: list[ModelIdentity]) -> dict[str, str]:
    """Run id -> model label: runs of one model share it. The largest group of a name keeps the
    name ('unnamed model' without one); other groups of that name read 'NAME (variant K: N ops per step)'."""
    groups: list[list[ModelIdentity]] = []
    for ident in sorted(identities, key=lambda i: (i.name or "", i.run_id)):
        home = next((g for g in groups if model_difference(g[0], ident) is None), None)
        if home is None:
            groups.append([ident])
        else:
            home.append(ident)
    labels: dict[str, str] = {}
    by_name: dict[str, list[list[ModelIdentity]]] = {}
    for g in groups:
        by_name.setdefault(g[0].name or "unnamed model", []).append(g)
    for name, named in by_name.items():
        named.sort(key=lambda g: (-len(g), g[0].run_id))
        for k, g in enumerate(named, 1):
            label = name if k == 1 else f"{name} (variant {k}: {sum(g[0].ops.values())} ops per step)"
            labels.update({i.run_id: label for i in g})
    return labels


def create_identity_table(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create the temp table ``run_model_identity`` (run_id, model_label) over every catalogued run."""
    run_ids = [r[0] for r in con.execute("SELECT run_id FROM catalog_runs ORDER BY run_id").fetchall()]
    labels = group_models(load_identities(con, run_ids))
    con.execute(f"CREATE OR REPLACE TEMP TABLE {IDENTITY_TABLE} (run_id VARCHAR, model_label VARCHAR)")
    insert_values(con, IDENTITY_TABLE, sorted(labels.items()))
