"""Many runs: the per-run work function, its executors (local pool, Dask), the batch catalog, the sweep."""
