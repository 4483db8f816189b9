"""Ingest: export files -> the normalized tables of ``schema.py`` in a DuckDB connection."""

from analyzer.ingest.loader import Ingested, load_export
from analyzer.ingest.model import ExportSource, IngestError, Problem

__all__ = ["ExportSource", "IngestError", "Ingested", "Problem", "load_export"]
