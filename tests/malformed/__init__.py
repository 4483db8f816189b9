"""A corpus of malformed Ascend exports, each built in a temporary folder from a tiny valid one."""
