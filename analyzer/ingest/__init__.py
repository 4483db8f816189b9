"""Ingest: export files -> the normalized tables of ``schema.toml`` in a DuckDB connection.

One sub-package per input format: ``csv/`` (one table of declarations for the simple files, a reader
each for the others), ``timeline/`` (Chrome-trace JSON), ``sqlite/`` (profiler databases),
``communication/`` (communication JSON) and ``metadata/`` (finding exports, their settings and
fingerprints). At this level: the table model (``schema.toml``, read by ``schema.py``), the reader
registry (``readers.py``), the loader and what every reader shares (inserts, value conversions, row
checks), and ``finalize.py`` with the derivations that need several tables.
"""

from analyzer.ingest.loader import Ingested, load_export
from analyzer.ingest.model import ExportSource, IngestError, Problem

__all__ = ["ExportSource", "IngestError", "Ingested", "Problem", "load_export"]
