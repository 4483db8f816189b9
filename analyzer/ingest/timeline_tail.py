"""A lone big timeline file parsed on two threads: its head beside the CSVs, its tail after them.

DuckDB parses a JSON array file on one thread. While the loader reads an export, the timeline
parse runs on a side connection and the CSVs (kernel_details, op_summary) on the main one, one
thread each; the CSVs finish first (at torch_npu 5x: 2.5 s against 4.3 s of parse) and the main
thread then waits. Here the file is cut once, at an event boundary, so that both threads finish
together: the side thread parses the head into the raw event table, the main thread parses the
tail (once its CSVs are in) into a table of its own, and the side thread appends those rows after
the head's, in file order.

Unlike ``timeline_split``, which has DuckDB parse pieces in parallel in one ordered INSERT (and so
hold a later piece's rows until the earlier ones are in, which needs memory), each piece here is
one single-threaded INSERT, so it needs about the memory of parsing the file whole: the tail's
rows are copied once, from their table to the raw one (at torch_npu 5x under
``NPU_TRIAGE_MEMORY_LIMIT=lean``, a peak RSS of 1199 MB against 1179 read whole).

The cut is checked the way ``timeline_split`` checks its cuts: both pieces are read strictly, and
when either does not parse (a cut inside a string, or any malformed event) nothing is kept and the
file is read whole, with its usual diagnostics.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from analyzer.ingest.timeline_json import first_char, insert_arrays, raw_table_columns
from analyzer.ingest.timeline_split import copy_span, cut_near

# How many times faster the JSON parse is than the CSV readers, per byte and per thread (measured:
# 2.2 to 2.8 on the bench's torch_npu exports); it sets where the file is cut.
JSON_BYTES_PER_CSV_BYTE = 2.5
# A file is cut from this size on, when its tail would be at least TAIL_MIN_BYTES
# (tests lower both).
CUT_MIN_BYTES = 32 << 20
TAIL_MIN_BYTES = 8 << 20
# Where the tail's table lives: an in-memory catalog that every connection of the database sees.
CATALOG = "npu_ingest"
_counter = itertools.count()


@dataclass
class TailHandoff:
    """One file's cut: the head read by the side thread, the tail by the main thread."""

    path: Path
    head_end: int
    tail_begin: int
    folder: Path
    tail_table: Future = field(default_factory=Future)

    def parse_tail(self, con: duckdb.DuckDBPyConnection) -> None:
        """Main thread, once its own readers are done: parse the tail into a table of CATALOG.

        Never raises; the outcome (the table's name, or the error) goes to ``read_into``."""
        if self.tail_table.done():
            return
        table = None
        try:
            table = _new_tail_table(con)
            tail = self.folder / "tail.json"
            with self.path.open("rb") as src, tail.open("wb", buffering=0) as dst:
                dst.write(b"[")
                copy_span(src, dst, self.tail_begin, self.path.stat().st_size - self.tail_begin)
            insert_arrays(con, table, [tail], file_no=0, strict=True)
        except BaseException as exc:  # handed to the side thread, which decides
            if table is not None:
                _drop_quietly(con, table)
            self.tail_table.set_exception(exc)
            return
        self.tail_table.set_result(table)

    def abandon(self) -> None:
        """The main thread stops before parsing the tail: the side thread reads the file whole."""
        if not self.tail_table.done():
            self.tail_table.set_exception(RuntimeError("the tail was not parsed"))

    def read_into(self, con: duckdb.DuckDBPyConnection, raw: str) -> bool:
        """Side thread: the head into ``raw``, then the tail's rows after it. False, with nothing
        inserted, when either piece does not parse; a DuckDB out-of-memory error is raised."""
        try:
            head_ok = self._read_head(con, raw)
            table = self._wait_tail()
            if table is None or not head_ok:
                con.execute(f"DELETE FROM {raw}")
                return False
            con.execute(f"INSERT INTO {raw} SELECT * FROM {table}")
            return True
        finally:
            self._drop_tail(con)

    def discard(self) -> None:
        """Remove the pieces' folder (the loader's last step with this cut, whatever happened)."""
        shutil.rmtree(self.folder, ignore_errors=True)

    def _read_head(self, con: duckdb.DuckDBPyConnection, raw: str) -> bool:
        head = self.folder / "head.json"
        try:
            with self.path.open("rb") as src, head.open("wb", buffering=0) as dst:
                copy_span(src, dst, 0, self.head_end)
                dst.write(b"]")
            insert_arrays(con, raw, [head], file_no=0, strict=True)
        except duckdb.OutOfMemoryException:
            self.tail_table.result()  # wait for the main thread before raising
            raise
        except (duckdb.Error, OSError):
            return False
        finally:
            head.unlink(missing_ok=True)
        return True

    def _wait_tail(self) -> str | None:
        try:
            return self.tail_table.result()
        except duckdb.OutOfMemoryException:
            raise
        except Exception:
            return None

    def _drop_tail(self, con: duckdb.DuckDBPyConnection) -> None:
        if self.tail_table.done() and self.tail_table.exception() is None:
            _drop_quietly(con, self.tail_table.result())


def plan_tail(paths: tuple[Path, ...], other_bytes: int) -> TailHandoff | None:
    """A cut of a lone top-level-array timeline file that balances the two threads, when the file
    is big enough and its tail would be worth a parse of its own; None otherwise.

    ``other_bytes``: what the main thread reads before the tail (the export's CSVs). The side
    thread parses ``head`` bytes while the main thread reads the CSVs and parses the rest; with
    the CSVs ``JSON_BYTES_PER_CSV_BYTE`` times as slow per byte, both end together when
    head = (size + JSON_BYTES_PER_CSV_BYTE * other_bytes) / 2.
    """
    if len(paths) != 1:
        return None
    path = paths[0]
    try:
        size = path.stat().st_size
        if size < CUT_MIN_BYTES or first_char(path) != "[":
            return None
        target = int((size + JSON_BYTES_PER_CSV_BYTE * other_bytes) / 2)
        if size - target < TAIL_MIN_BYTES:
            return None
        with path.open("rb") as fh:
            cut = cut_near(fh, target)
    except OSError:
        return None
    if cut is None:
        return None
    return TailHandoff(path, *cut, Path(tempfile.mkdtemp(prefix="npu_triage_")))


def _drop_quietly(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """Drop a tail table; after an out-of-memory error even that may fail, and it then stays (empty
    or not) in CATALOG until the connection closes."""
    try:
        con.execute(f"DROP TABLE IF EXISTS {table}")
    except duckdb.Error:
        pass


def _new_tail_table(con: duckdb.DuckDBPyConnection) -> str:
    """Create a new, empty raw event table in CATALOG (the columns of ``create_raw_table``'s);
    returns its name."""
    con.execute(f"ATTACH IF NOT EXISTS ':memory:' AS {CATALOG}")
    name = f"{CATALOG}.main._tl_tail_{next(_counter)}"
    con.execute(f"CREATE TABLE {name} ({raw_table_columns()})")
    return name
