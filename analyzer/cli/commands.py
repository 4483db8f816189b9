"""The list of subcommand modules; each has register(subparsers) and sets func on its parser."""

from analyzer.cli import ingest_cmd, schema_cmd

MODULES = [ingest_cmd, schema_cmd]

# Many runs: batch catalog, listing, ad-hoc SQL, Parquet export (issue 5).
from analyzer.cli import batch_cmd, diff_cmd, export_cmd, query_cmd, runs_cmd, sweep_cmd  # noqa: E402

MODULES += [batch_cmd, runs_cmd, query_cmd, export_cmd, diff_cmd, sweep_cmd]

# Diagnosis: run the rules, write diagnosis.json/.md; the rule reference and checks (issue 3).
from analyzer.cli import diagnose_cmd, rules_cmd  # noqa: E402

MODULES += [diagnose_cmd, rules_cmd]
