"""Analysis: declarative rule files -> findings over the normalized tables, with skips, params and ranking."""
