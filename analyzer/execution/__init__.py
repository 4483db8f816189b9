"""How the engine runs: DuckDB's memory limit and its private spill folder (one rule for every command)."""
