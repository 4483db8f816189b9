"""logs/records.sql: log lines split into log_files / log_events records by DuckDB, as `npu-triage logs` reads them."""

from __future__ import annotations

from datetime import datetime

import pytest

from analyzer.ingest.database import connect
from analyzer.logs.reader import load_logs
from tests.views.view_case import rows

# A plog (cann headers): a line before the first record (unparsed), an error naming its kernel, stream, task
# and device with two continuation lines, a blank line (not counted), an INFO record; an install log.
ERROR = "1234 fault kernel_name=MatMulV2_x, stream_id=5, task_id=42, device_id=0"
PLOG = f"""\
stray line before any record
[ERROR] RUNTIME(100,python):2025-01-01-10:00:05.123.456 [stream.cc:12]{ERROR}
  continuation one
  continuation two

[INFO] GE(100,python):2025-01-01-10:00:06.000.001 [ge.cc:3]77 graph built
"""
INSTALL = "[Install] [2025-01-01 09:00:00] [INFO]Driver installed\n"
FILES = {"debug/plog/plog-100_20250101.log": PLOG, "install/ascend_install.log": INSTALL}


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    c = connect()
    load_logs(c, root, "L")
    yield c
    c.close()


def test_log_files_one_row_per_file_with_its_counts(con):
    sql = """SELECT run_id, file_id, path, layout, log_kind, collection, name_pid, size_bytes, line_count,
                    record_count, unparsed_line_count, skipped
             FROM log_files ORDER BY run_id, file_id"""
    assert rows(con, sql) == [
        ("L", 1, "debug/plog/plog-100_20250101.log", "plog", "debug", "ascend_log", 100, len(PLOG), 5, 2, 1, None),
        ("L", 2, "install/ascend_install.log", "install", None, "plain", None, len(INSTALL), 1, 1, 0, None),
    ]


def test_log_events_one_row_per_record_with_its_header_fields(con):
    sql = """SELECT file_id, line_no, level, module, pid, process, wall_time, src_file, src_line, thread_id, message,
                    continuation_count, kernel_name, device_id, stream_id, task_id
             FROM log_events ORDER BY run_id, file_id, line_no"""
    assert rows(con, sql) == [
        (1, 2, "ERROR", "RUNTIME", 100, "python", datetime(2025, 1, 1, 10, 0, 5, 123456), "stream.cc", 12, 1234,
         ERROR + "\n  continuation one\n  continuation two", 2, "MatMulV2_x", 0, 5, 42),
        (1, 6, "INFO", "GE", 100, "python", datetime(2025, 1, 1, 10, 0, 6, 1), "ge.cc", 3, 77, "77 graph built", 0,
         None, None, None, None),
        (2, 1, "INFO", "Install", None, None, datetime(2025, 1, 1, 9, 0, 0), None, None, None, "Driver installed", 0,
         None, None, None, None),
    ]  # fmt: skip
