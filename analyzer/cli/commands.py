"""The list of subcommand modules; each has register(subparsers) and sets func on its parser."""

from analyzer.cli import ingest_cmd, schema_cmd

MODULES = [ingest_cmd, schema_cmd]
