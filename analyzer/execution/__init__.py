"""How the engine runs: DuckDB's memory limit, its private spill folder and its threads (one rule for every command)."""
