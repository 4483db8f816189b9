"""What rules, catalog, sweep and diff all compute from the normalized tables: run metrics, scaling, model identity."""
