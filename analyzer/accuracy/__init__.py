"""Accuracy dumps against a reference: readers, pairing, streamed comparison, error locations (`npu-triage accuracy`)."""
