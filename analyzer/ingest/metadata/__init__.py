"""What an export is before its tables are read: where it lies, what wrote it, its settings and its fingerprint."""
