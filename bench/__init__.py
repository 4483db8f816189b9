"""Benchmarks of npu-triage: `python bench/run.py` (vs the parse floor and msprof-analyze)."""
