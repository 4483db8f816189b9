"""CANN logs: find the log files of a folder, read them into log_events, and judge them with rules of scope 'logs'."""
