"""The benchmark of npu-triage against the parse floor and msprof-analyze (run it as ``python bench/run.py``)."""
