"""A corpus of malformed Ascend exports, each built into a temporary folder from a tiny valid base export."""
