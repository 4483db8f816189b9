"""The built-in rule files (TOML, one rule per file under a category folder); shipped as package data."""
