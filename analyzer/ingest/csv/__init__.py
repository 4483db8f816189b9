"""CSV exports (msprof *_N.csv, torch_npu *.csv) -> normalized tables: the shared text core, one reader per family."""
