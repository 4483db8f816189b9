"""SQLite exports (torch_npu / MindSpore profiler db, msprof_*.db, analysis.db) -> normalized tables."""
