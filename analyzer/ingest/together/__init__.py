"""Many runs read together: each kind of file of all runs in one scan, the per-run checks and the runs rows
as set-wise queries; a run with anything to say is read again on its own (loader._read_source)."""
