"""Accuracy reports: the comparison as JSON, Markdown and an offline HTML page with error heatmaps."""
