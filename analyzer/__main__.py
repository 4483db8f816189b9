"""`python -m analyzer` runs the command line."""

from analyzer.cli import run

run()
