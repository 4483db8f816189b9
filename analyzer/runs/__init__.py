"""Many runs: the per-run work function, the local executor, the batch catalog and the batch-size sweep."""
