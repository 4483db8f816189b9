"""A dump folder against its reference: read both, pair, compare, locate the errors, fill the accuracy tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from analyzer.accuracy.compare import compare_pairs
from analyzer.accuracy.error_map import error_map
from analyzer.accuracy.locations import location_row
from analyzer.accuracy.pairing import Pair, pair_tensors
from analyzer.accuracy.read.folder import TensorFolder, read_folder
from analyzer.accuracy.read.stats_csv import stats_select
from analyzer.accuracy.rows import compare_row, tensor_rows, tiling_rows, unpaired_row
from analyzer.accuracy.tables import create_accuracy_tables, insert_rows
from analyzer.accuracy.verdict import few_count, judge
from analyzer.ingest.model import Problem

# A tensor is located (error map and verdict) when its comparison shows a difference of any size the rules'
# default thresholds could call divergent; the rules decide, this only bounds the work.
LOCATE_BELOW_COSINE = 0.999
LOCATE_ABOVE_MAX_ABS = 1.0


@dataclass
class Comparison:
    """The result: the connection holding the tables, the run id, and every problem met."""

    con: duckdb.DuckDBPyConnection
    run_id: str
    dump: Path
    reference: Path
    problems: list[Problem] = field(default_factory=list)
    pair_count: int = 0
    compared_bytes: int = 0


def compare_folders(
    dump: Path, reference: Path, con: duckdb.DuckDBPyConnection, threads: int | None = None, run_id: str | None = None
) -> Comparison:
    """Compare every tensor of ``dump`` with ``reference`` into the accuracy tables of ``con``.

    Args:
        dump: a dump folder (or any folder below it, or one file).
        reference: a folder of .npy / .pt tensors, or a second dump folder.
        con: a connection of ``analyzer.ingest.database.connect()``; the accuracy tables are created in it.
        threads: threads comparing chunks (default: the machine's cores).
        run_id: the comparison's run id in the tables (default: the dump folder's name).
    """
    dump, reference = Path(dump), Path(reference)
    run_id = run_id or dump.resolve().name
    create_accuracy_tables(con)
    sides = {"dump": read_folder(dump), "reference": read_folder(reference)}
    pairs, unpaired = pair_tensors(sides["dump"].tensors, sides["reference"].tensors)
    result = Comparison(con, run_id, dump, reference, pair_count=len(pairs))
    _fill(con, run_id, sides, pairs, unpaired, threads)
    for folder in sides.values():
        result.problems += folder.problems.items
    for item in unpaired:
        if item.reason.startswith("shape"):  # a tensor read but lost to the comparison
            where = f"{item.tensor.slot} {item.tensor.slot_index}"
            result.problems.append(Problem(_file(sides["dump"], item.tensor.path), where, "error", item.reason))
    result.compared_bytes = sum(p.dump.size_bytes + p.reference.size_bytes for p in pairs)
    return result


def _fill(con, run_id: str, sides: dict[str, TensorFolder], pairs: list[Pair], unpaired, threads) -> None:
    order = {(p.dump.op_name, p.occurrence): p.exec_order for p in pairs}
    order |= {(u.tensor.op_name, u.occurrence): u.exec_order for u in unpaired}
    for side, folder in sides.items():
        insert_rows(con, "tensors", tensor_rows(run_id, side, folder, order))
        _insert_stats(con, run_id, side, folder)
        insert_rows(con, "tiling_data", tiling_rows(run_id, side, folder))
    measured = compare_pairs(pairs, threads)
    insert_rows(con, "tensor_compare", [compare_row(run_id, p, m, sides) for p, m in zip(pairs, measured, strict=True)])
    insert_rows(con, "unpaired_tensors", [unpaired_row(run_id, u, sides) for u in unpaired])
    located = [p for p, m in zip(pairs, measured, strict=True) if p.dump.slot == "output" and _shows_difference(m)]
    insert_rows(con, "error_locations", [_locate(run_id, p) for p in located])


def _shows_difference(m: dict) -> bool:
    return (
        m["cosine"] < LOCATE_BELOW_COSINE
        or (m["max_abs_err"] or 0.0) > LOCATE_ABOVE_MAX_ABS
        or m["nonfinite_mismatch_count"] > 0
    )


def _locate(run_id: str, pair: Pair) -> dict:
    emap = error_map(pair, few_count(pair.dump.element_count))
    return location_row(run_id, pair, emap, judge(emap))


def _insert_stats(con, run_id: str, side: str, folder: TensorFolder) -> None:
    for path, name in folder.stats_files:
        rel = stats_select(con, path, name, folder.problems)
        if rel is not None:
            con.register("_stats_rows", rel.to_arrow_table())
            try:
                con.execute(
                    "INSERT INTO tensor_stats BY NAME SELECT ? AS run_id, ? AS side, * FROM _stats_rows", [run_id, side]
                )
            finally:
                con.unregister("_stats_rows")


def _file(folder: TensorFolder, path: Path) -> str:
    return folder.problems.name(path)
