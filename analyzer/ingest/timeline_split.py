"""Parse one large top-level-array timeline file on every DuckDB thread, cut into pieces at events.

DuckDB parses a JSON array file on one thread, but several files in parallel. A lone big
``trace_view.json`` is therefore cut into pieces at ``}, {`` separators, each piece is written as
a valid array into a private temporary folder (never beside the export), and all pieces are read
by one strict ``read_json`` call (``timeline_json.insert_arrays``, strict). This is for a file
read alone; beside an export's CSVs, the loader cuts it in two instead (``timeline_tail``).

A separator found inside a string or a nested object is harmless: the piece before it then ends
inside that string or object, so it is not valid JSON and the strict read fails as a whole,
inserting nothing, and the caller reads the file whole as before. Conversely, when every piece
parses, each cut was a real boundary (the first piece starts where the file starts and parses
exactly as the file's own beginning does, so the next piece starts at an element; and so on), so
the rows are the file's rows. They also come in file order: DuckDB scans an array file whole as
one batch, numbers batches in file order, and an INSERT keeps batch order while
``preserve_insertion_order`` is on (checked; timeline_counters uses the raw rowid as event number).

Keeping that order has a price when memory is short: DuckDB holds the rows of a later piece in
memory until the pieces before it are in, and each piece's reader keeps its own buffers (about
40 MiB). Under a memory limit below about twice the file the pieces then take turns, one thread
at a time, and the split only adds the copy: measured on a 127 MB trace_view.json under a 130 MiB
limit, the parse took 0.9-1.4 s split and whole alike (0.5-0.65 s split under 1 GiB), and a whole
diagnose with ``NPU_TRIAGE_MEMORY_LIMIT=lean`` went 2.81 -> 2.57 s (median of 8, interleaved)
reading the file whole, its CSVs meanwhile on the other core. Under such a limit a file is not
split (beside CSVs it is now cut in two instead, ``timeline_tail``, which needs no such memory).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO

import duckdb

from analyzer.ingest.memory_budget import current_limit_bytes
from analyzer.ingest.model import ReadContext
from analyzer.ingest.timeline_json import EVENT_SEPARATOR, first_char, insert_arrays

# A file is split from this size on, into pieces of at least PIECE_MIN_BYTES (tests lower both).
SPLIT_MIN_BYTES = 32 << 20
PIECE_MIN_BYTES = 16 << 20
# How far past an even offset a separator is looked for (none there: the file gets one piece less).
_CUT_WINDOW_BYTES = 4 << 20
# A file is split only under a memory limit of at least this many times its size (see above).
LIMIT_PER_FILE_BYTE = 2
_COPY_BLOCK_BYTES = 64 << 20


def piece_count(size_bytes: int, threads: int) -> int:
    """Pieces that an array file of ``size_bytes`` is cut into on ``threads`` threads (1: no split).

    >>> piece_count(127 << 20, 2), piece_count(640 << 20, 64), piece_count(40 << 20, 8)
    (2, 40, 2)
    >>> piece_count(31 << 20, 8), piece_count(640 << 20, 1)
    (1, 1)
    """
    if size_bytes < SPLIT_MIN_BYTES:
        return 1
    return max(1, min(threads, size_bytes // PIECE_MIN_BYTES))


def splits_in_parallel(path: Path, threads: int, limit_bytes: int | None = None) -> bool:
    """True when ``read_split_array`` would cut this file: a top-level JSON array big enough for at
    least two pieces on ``threads`` threads (so its parse uses every thread, not one), under a
    DuckDB memory limit (``limit_bytes``; None: no limit) of at least LIMIT_PER_FILE_BYTE times
    its size."""
    try:
        size = path.stat().st_size
        if limit_bytes is not None and limit_bytes < LIMIT_PER_FILE_BYTE * size:
            return False
        return piece_count(size, threads) >= 2 and first_char(path) == "["
    except OSError:
        return False


def read_split_array(con: duckdb.DuckDBPyConnection, raw: str, paths: tuple[Path, ...], ctx: ReadContext) -> bool:
    """Read a lone timeline file from pieces parsed in parallel, as file 0 of the raw table.

    Returns False, having inserted nothing, when there is not exactly one file, the file is not
    split (``splits_in_parallel``, under ``con``'s memory limit), or a piece does not parse (a
    cut inside a string, or any malformed event): the caller then reads the file whole, with its
    usual diagnostics.
    """
    if len(paths) != 1 or not _keeps_insertion_order(con):
        return False
    path = paths[0]
    threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
    if not splits_in_parallel(path, threads, current_limit_bytes(con)):
        return False
    try:
        with tempfile.TemporaryDirectory(prefix="npu_triage_") as tmp:
            spans = _piece_spans(path, piece_count(path.stat().st_size, threads))
            if len(spans) < 2:
                return False
            insert_arrays(con, raw, _write_pieces(path, Path(tmp), spans), file_no=0, strict=True)
    except duckdb.OutOfMemoryException:
        raise
    except (duckdb.Error, OSError):
        return False
    ctx.mark_read(path)
    return True


def _keeps_insertion_order(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(con.execute("SELECT current_setting('preserve_insertion_order')").fetchall()[0][0])


def _piece_spans(path: Path, pieces: int) -> list[tuple[int, int]]:
    """Byte spans [begin, end) of the pieces: each piece but the last ends with an event's '}', each
    but the first begins with the next event's '{'."""
    size = path.stat().st_size
    spans, begin = [], 0
    with path.open("rb") as fh:
        for k in range(1, pieces):
            target = size * k // pieces
            if target <= begin:
                continue
            cut = cut_near(fh, target)
            if cut is None:
                continue
            spans.append((begin, cut[0]))
            begin = cut[1]
    return [*spans, (begin, size)]


def cut_near(fh: BinaryIO, target: int) -> tuple[int, int] | None:
    """The first place at or after byte ``target`` of an open array file (within _CUT_WINDOW_BYTES)
    where one event ends and the next begins: (just after the '}', at the '{'); None when there is
    none there."""
    fh.seek(target)
    found = EVENT_SEPARATOR.search(fh.read(_CUT_WINDOW_BYTES))
    if found is None:
        return None
    return target + found.start() + 1, target + found.end() - 1


def _write_pieces(path: Path, folder: Path, spans: list[tuple[int, int]]) -> list[Path]:
    """Write each span as its own JSON array (brackets added where the cut removed them)."""
    pieces = []
    with path.open("rb") as src:
        for k, (begin, end) in enumerate(spans):
            piece = folder / f"piece_{k:04d}.json"
            with piece.open("wb", buffering=0) as dst:
                dst.write(b"[" if k else b"")
                copy_span(src, dst, begin, end - begin)
                dst.write(b"]" if k < len(spans) - 1 else b"")
            pieces.append(piece)
    return pieces


def copy_span(src: BinaryIO, dst: BinaryIO, offset: int, length: int) -> None:
    """Append src[offset:offset + length] to the unbuffered dst: in the kernel when it can, else in
    big blocks (never a Python object per event)."""
    try:
        while length > 0 and (copied := os.copy_file_range(src.fileno(), dst.fileno(), length, offset)):
            offset, length = offset + copied, length - copied
    except (AttributeError, OSError):
        pass  # no copy_file_range here (EXDEV, ENOSYS, not Linux): the loop below copies the rest
    src.seek(offset)
    while length > 0 and (block := src.read(min(length, _COPY_BLOCK_BYTES))):
        length -= len(block)
        view = memoryview(block)
        while view:  # an unbuffered write may take only part of a block
            view = view[dst.write(view) :]
