"""Readers of dump sets and references: native adump files, .npy, .pt, stats CSV and tiling data."""
