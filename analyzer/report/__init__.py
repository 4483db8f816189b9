"""Presentation: findings and tables -> terminal lines, Markdown, JSON and HTML. Nothing here reads raw files."""
