"""What batch finds and how it knows an export again: archives below the top folder, sliced files' fingerprints."""

from __future__ import annotations

import shutil
import tarfile
import zipfile
from pathlib import Path

from analyzer.ingest.metadata.discover import discover
from analyzer.ingest.metadata.fingerprint import source_fingerprint
from analyzer.runs.archives import unpack, unsafe_reason
from analyzer.runs.batch import plan_batch
from tests.tiny_exports import write_tiny_export


def _zip_folder(zip_path: Path, folder: Path) -> None:
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path, "w") as zf:
        for p in sorted(folder.rglob("*")):
            zf.write(p, p.relative_to(folder.parent).as_posix())


def test_pins_batch_finds_archives_in_sub_folders(tmp_path):
    root, staging = tmp_path / "in", tmp_path / "staging"
    for i in range(4):
        write_tiny_export((root if i == 0 else staging) / f"run_{i}", seed=i, steps=2)
    _zip_folder(root / "top.zip", staging / "run_1")
    _zip_folder(root / "a" / "b" / "deep.zip", staging / "run_2")
    (root / "c").mkdir()
    with tarfile.open(root / "c" / "more.tgz", "w:gz") as tf:
        tf.add(staging / "run_3", arcname="run_3")
    (root / "d").mkdir()
    (root / "d" / "corrupt.zip").write_bytes(b"PK\x03\x04 not a zip")
    plan = plan_batch(root, tmp_path / "work")
    assert sorted(t.label for t in plan.tasks) == [
        "a/b/deep.zip!/run_2",
        "c/more.tgz!/run_3",
        "run_0",
        "top.zip!/run_1",
    ]
    assert [f["path"] for f in plan.failures] == ["d/corrupt.zip"]


def _sliced_export(folder: Path) -> Path:
    """A tiny export whose op table is written in two slices (kernel_details_0.csv, kernel_details_1.csv)."""
    export = write_tiny_export(folder, steps=2)
    whole = export / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    lines = whole.read_text().splitlines(keepends=True)
    (whole.parent / "kernel_details_0.csv").write_text("".join(lines[:6]))
    (whole.parent / "kernel_details_1.csv").write_text(lines[0] + "".join(lines[6:]))
    whole.unlink()
    return export


def test_pins_fingerprint_reads_every_slice_of_a_kind(tmp_path):
    first = _sliced_export(tmp_path / "one" / "run")
    shutil.copytree(first, tmp_path / "two" / "run")
    second_slice = tmp_path / "two" / "run" / "ASCEND_PROFILER_OUTPUT" / "kernel_details_1.csv"
    text = second_slice.read_text()
    second_slice.write_text(text.replace("Softmax_5", "Softmax_6"))  # same size, other content
    (a,), (b,) = discover(tmp_path / "one"), discover(tmp_path / "two")
    assert len(a.files["op_summary"]) == 2
    assert source_fingerprint(a) != source_fingerprint(b)
    assert source_fingerprint(a) == source_fingerprint(discover(tmp_path / "one")[0])


def test_pins_batch_plan_gives_two_copies_of_one_export_one_fingerprint(tmp_path):
    root = tmp_path / "in"
    write_tiny_export(root / "a" / "run", seed=3, steps=2)
    shutil.copytree(root / "a" / "run", root / "b" / "run")
    write_tiny_export(root / "c" / "run", seed=4, steps=2)
    prints = {t.label: t.fingerprint for t in plan_batch(root, tmp_path / "work").tasks}
    assert sorted(prints) == ["a/run", "b/run", "c/run"]
    assert prints["a/run"] == prints["b/run"] != prints["c/run"]  # the copy is known by its content


def test_pins_archive_entries_with_windows_absolute_names_are_refused(tmp_path):
    assert [unsafe_reason(n) for n in ("\\abs.txt", "\\\\server\\share\\x", "C:\\x", "C:x", "a\\b.csv")] == [
        "absolute path",
        "absolute path",
        "absolute path",
        "absolute path",
        None,
    ]
    archive = tmp_path / "win.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ok/kernel_details.csv", "fine")
        zf.writestr("\\abs.txt", "bad")
    result = unpack(archive, tmp_path / "out")
    assert len(result.refused) == 1 and "absolute path" in result.refused[0]
