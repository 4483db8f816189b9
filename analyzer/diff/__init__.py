"""The diff of two runs: per-type and per-op deltas, alignment, renames, noise-aware significance."""
