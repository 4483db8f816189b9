"""The list of subcommand modules; each has register(subparsers) and sets func on its parser."""

from analyzer.cli import ingest_cmd, schema_cmd

MODULES = [ingest_cmd, schema_cmd]

# Many runs: batch catalog, listing, ad-hoc SQL, Parquet export (issue 5).
from analyzer.cli import batch_cmd, export_cmd, query_cmd, runs_cmd  # noqa: E402

MODULES += [batch_cmd, runs_cmd, query_cmd, export_cmd]
