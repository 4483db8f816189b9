"""Accuracy dumps against a reference: read, pair, compare locate the error (`npu-triage accuracy`)."""
