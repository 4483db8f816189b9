"""The log reader: layouts from paths, record forms, continuation lines, unparsed lines, bad files; real collections."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.ingest.database import connect
from analyzer.logs.layout import classify
from analyzer.logs.reader import load_logs
from tests.conftest import ROOT

REAL_LOGS = ROOT.parent / "shared" / "real-logs"


@pytest.fixture
def real_logs() -> Path:
    """../shared/real-logs, or skip: the real CANN logs live beside the project, never inside it."""
    if not REAL_LOGS.is_dir():
        pytest.skip("../shared/real-logs is absent: the real CANN logs are only beside the project checkout")
    return REAL_LOGS


def _read(tree: Path):
    con = connect()
    load = load_logs(con, tree, "t")
    return con, load


@pytest.mark.parametrize(
    ("rel", "layout", "kind", "collection", "rank", "device"),
    [
        ("asys_output_1/dfx/log/host/cann/run/device-3/device-9_20240101.log", "device", "run", "asys", None, 3),
        (
            "asys_output_1/dfx/log/device/dev-os-1/system/run/device-os/device-os_1.log",
            "device_os",
            "run",
            "asys",
            None,
            1,
        ),
        ("slog/dev-os-0/device-0/device-0_20201224011054112.log", "device_os", None, "slog", None, 0),
        ("hisi_logs/device-0/history.log", "hisi", None, "msnpureport", None, 0),
        ("job/rank_5/ascend/log/security/plog/plog-1_2.log", "plog", "security", "ascend_log", 5, None),
        ("job/worker-5/ascend/log/security/plog/plog-1_2.log", "plog", "security", "ascend_log", None, None),
        ("asys/dfx/log/host/install/ascend_install.log", "install", None, "asys", None, None),
    ],
)
def test_layout_classify_paths_name_the_log(rel, layout, kind, collection, rank, device):
    f = classify(Path("/r"), Path("/r") / rel, 1)
    assert (f.layout, f.log_kind, f.collection, f.rank_id, f.device_id) == (layout, kind, collection, rank, device)
    # a worker-N / node-N folder is a machine (its ranks come from the HCCL records): its number is the node's
    assert f.node_id == (5 if "/worker-5/" in rel else None)


def test_reader_record_forms_continuations_and_unparsed_lines(tmp_path):
    plog = tmp_path / "debug" / "plog" / "plog-77_20240912164003456.log"
    plog.parent.mkdir(parents=True)
    plog.write_text(
        "garbage before any record\n"
        "[ERROR] TSCH(-1,null):1970-01-01-08:00:14.083.518 17 (cpuid:0) dispatcher.c:1193 bs_done_exception_proc\n"
        "<exception_print>AIC_ERROR=0x10\n<exception_print>AIC_ERROR_MASK=0x6de\n"
        "[ERROR] RUNTIME(77,python3):2024-09-12-16:40:07.468.642 [davinci_kernel_task.cc:1180]78 Print:"
        "Aicore kernel execute failed, device_id=1, stream_id=42, task_id=9, fault kernel_name=K_mix_aic, x\n"
        "[INFO] TDT(77,python3):2024-09-12-16:40:07.500.000 [main.cpp:283][main][tid:79] start\n",
        encoding="utf-8",
    )
    install = tmp_path / "install" / "ascend_install.log"
    install.parent.mkdir()
    install.write_text("[Driver] [2024-06-01 10:00:00] [ERROR]driver vermagic check failed.\n", encoding="utf-8")
    con, load = _read(tmp_path)
    assert load.problems == []
    rows = con.execute(
        "SELECT line_no, level, module, pid, CAST(wall_time AS VARCHAR), src_file, src_line, thread_id, "
        "continuation_count, kernel_name, device_id, stream_id, task_id, error_code FROM log_events "
        "ORDER BY file_id, line_no"
    ).fetchall()
    assert rows[0][:4] == (2, "ERROR", "TSCH", -1) and rows[0][8] == 2
    assert rows[1] == (
        5,
        "ERROR",
        "RUNTIME",
        77,
        "2024-09-12 16:40:07.468642",
        "davinci_kernel_task.cc",
        1180,
        78,
        0,
        "K_mix_aic",
        1,
        42,
        9,
        "KERNEL_FAULT",
    )
    assert rows[2][7] == 79  # [tid:N]
    assert rows[3][1:4] == ("ERROR", "Driver", None) and rows[3][13] == "INSTALL_ERROR"
    message = con.execute("SELECT message FROM log_events WHERE line_no = 2").fetchall()[0][0]
    assert message.endswith("<exception_print>AIC_ERROR=0x10\n<exception_print>AIC_ERROR_MASK=0x6de")
    counts = con.execute("SELECT sum(record_count), sum(unparsed_line_count) FROM log_files").fetchall()[0]
    assert counts == (4, 1)


def test_reader_binary_and_non_utf8_files_are_not_fatal(tmp_path):
    (tmp_path / "bin.log").write_bytes(b"\x00\x01\x02 not text")
    (tmp_path / "latin.log").write_bytes(b"[WARNING] GE(5,p):2024-01-01-00:00:00.000.001 [a.cc:1]5 caf\xe9 \xff\n")
    con, load = _read(tmp_path)
    assert load.problems == ["bin.log: binary (holds NUL bytes), not a text log; skipped"]
    assert con.execute("SELECT level, message FROM log_events").fetchall() == [("WARNING", "5 caf\ufffd \ufffd")]
    assert con.execute("SELECT skipped IS NOT NULL FROM log_files ORDER BY path").fetchall() == [(True,), (False,)]


@pytest.mark.real_data
def test_reader_real_asys_collection_reads_every_line(real_logs):
    con, load = _read(real_logs / "asys_aicore_error_2024")
    assert load.problems == []
    lines, records, unparsed = con.execute(
        "SELECT sum(line_count), sum(record_count), sum(unparsed_line_count) FROM log_files"
    ).fetchall()[0]
    assert (lines, records, unparsed) == (477, 477, 0)  # grep -c "" and grep -c "^\[" of the four files
    kernel = con.execute("SELECT DISTINCT kernel_name FROM log_events WHERE kernel_name IS NOT NULL").fetchall()
    assert kernel == [("FlashAttentionScore_5881aeec01e51adb01fb1db8be1c04f0_10000000000022420943_mix_aic",)]


def test_logs_docs_table_model_is_current():
    from analyzer.ingest.schema import tables_for_scope
    from analyzer.report.schema_doc import render_tables_markdown

    page = (ROOT / "docs" / "logs.md").read_text(encoding="utf-8")
    section = page.split("<!-- logs-model:start (generated from analyzer/logs/schema.toml) -->\n", 1)[1]
    expected = render_tables_markdown(list(tables_for_scope("logs").values()), "###")
    assert section.split("<!-- logs-model:end -->", 1)[0] == expected, "docs/logs.md's table model is stale"


def test_reader_awkward_text_is_read_not_fatal(tmp_path):
    head = "[WARNING] GE(1,p):2024-01-01-00:00:00.000.00"
    (tmp_path / "empty.log").write_text("")
    (tmp_path / "crlf.log").write_bytes(f"{head}1 [a.cc:1]1 a\r\n{head}2 [a.cc:1]1 b\r\n".encode())
    (tmp_path / "bom.log").write_bytes(f"\ufeff{head}1 [a.cc:1]1 bom\n".encode())
    (tmp_path / "sep.log").write_text(f'{head}1 [a.cc:1]1 "open quote,\ttab\x01sep\n')
    (tmp_path / "long.log").write_text(f"{head}1 [a.cc:1]1 " + "x" * 2_500_000 + f"\n{head}2 [a.cc:1]1 after\n")
    con, load = _read(tmp_path)
    assert load.problems == []
    per_file = dict(con.execute("SELECT path, record_count FROM log_files").fetchall())
    assert per_file == {"bom.log": 1, "crlf.log": 2, "empty.log": 0, "long.log": 2, "sep.log": 1}
    assert con.execute("SELECT message FROM log_events WHERE message LIKE '%open quote%'").fetchall() == [
        ('1 "open quote,\ttab\ufffdsep',)
    ]
    assert con.execute("SELECT count(*) FROM log_events WHERE message LIKE '%\r%'").fetchall() == [(0,)]
