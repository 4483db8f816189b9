"""Accuracy readers: the DumpData header from the project's .proto, every data type, device formats, names, stats."""

from __future__ import annotations

import importlib.util
import struct

import numpy as np
import pytest

from analyzer.accuracy.read.dtypes import DATA_TYPES, numpy_dtype
from analyzer.accuracy.read.dump_names import parse_dump_name
from analyzer.accuracy.read.folder import read_folder
from analyzer.accuracy.read.formats import to_original
from analyzer.accuracy.read.header_proto import PROTO_PATH, DumpData, file_descriptor
from fixtures.dumps.layouts import to_fractal_nz, to_fractal_z, to_nc1hwc0


def _write_native(path, arrays_with_codes, fmt_code=2):
    """A native dump file of one output per (array, data type code)."""
    header = DumpData(version="2.0", op_name="op")
    for array, code in arrays_with_codes:
        entry = header.output.add(data_type=code, format=fmt_code, size=array.nbytes)
        entry.shape.dim.extend(array.shape)
    head = header.SerializeToString()
    path.write_bytes(struct.pack("<Q", len(head)) + head + b"".join(a.tobytes() for a, _ in arrays_with_codes))


@pytest.mark.skipif(importlib.util.find_spec("grpc_tools") is None, reason="grpcio-tools is not installed")
def test_header_proto_descriptor_equals_protoc_output(tmp_path):
    from google.protobuf import descriptor_pb2
    from grpc_tools import protoc

    out = tmp_path / "set.pb"
    assert protoc.main(["protoc", f"-I{PROTO_PATH.parent}", f"--descriptor_set_out={out}", PROTO_PATH.name]) == 0
    compiled = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]
    ours = file_descriptor(PROTO_PATH.read_text(encoding="utf-8"))
    assert ours.package == compiled.package == "toolkit.dumpdata"
    assert [m.SerializeToString() for m in ours.message_type] == [m.SerializeToString() for m in compiled.message_type]


@pytest.mark.slow
def test_native_every_numpy_data_type_reads_back_equal(tmp_path):
    rng = np.random.default_rng(7)
    codes = [c for c, (_, dt) in DATA_TYPES.items() if dt is not None]
    arrays = [(rng.standard_normal((2, 3)) * 4).astype(numpy_dtype(c)) for c in codes]
    _write_native(tmp_path / "Cast.cast_1.1.2.100", list(zip(arrays, codes, strict=True)))
    folder = read_folder(tmp_path)
    assert folder.problems.items == []
    got = {t.slot_index: t for t in folder.tensors}
    assert {got[i].dtype_name for i in got} >= {"bfloat16", "float8_e5m2", "float8_e4m3fn", "complex64", "bool"}
    for i, array in enumerate(arrays):
        assert got[i].whole().dtype == array.dtype
        assert got[i].whole().tobytes() == array.tobytes()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["float16", "float32", "bfloat16"])
def test_device_formats_convert_back_to_the_original_shape(name):
    import ml_dtypes  # noqa: F401 (names bfloat16; imported by the test that needs it, not by every collection)

    dtype = np.dtype(name)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 19, 5, 3)).astype(dtype)
    c0 = to_nc1hwc0(x)
    assert np.array_equal(to_original(c0.ravel(), "NC1HWC0", c0.shape, x.shape), x)
    w = rng.standard_normal((21, 11, 3, 3)).astype(dtype)
    z = to_fractal_z(w)
    assert np.array_equal(to_original(z.ravel(), "FRACTAL_Z", z.shape, w.shape), w)
    m = rng.standard_normal((3, 37, 20)).astype(dtype)
    nz = to_fractal_nz(m)
    assert np.array_equal(to_original(nz.ravel(), "FRACTAL_NZ", nz.shape, m.shape), m)


def test_dump_names_stream_form_and_ffts_suffix_are_parsed():
    name = parse_dump_name("MatMul.layer_0_mm.3.41.2.1700000000000123.FFTSPLUS.1.0.0")
    assert (name.op_type, name.op_name, name.dump_number, name.task_id, name.stream_id) == (
        "MatMul",
        "layer_0_mm",
        3,
        41,
        2,
    )
    assert parse_dump_name("Conv2D.conv1.7.2.1700000000000001").dump_number is None
    assert parse_dump_name("Conv2D.conv1.x.2.1") is None


def test_npy_names_of_both_forms_pair_with_their_operator(tmp_path):
    np.save(tmp_path / "Conv2D_output_0.npy", np.ones((2, 2), np.float16))
    np.save(tmp_path / "Add.add_1.4.2.17.input.1.npy", np.ones(3, np.float32))
    np.save(tmp_path / "conv1.0.17.npy", np.ones(3, np.float32))
    got = sorted((t.op_name, t.slot, t.slot_index, t.timestamp_us) for t in read_folder(tmp_path).tensors)
    assert got == [("Conv2D", "output", 0, None), ("add_1", "input", 1, 17), ("conv1", "output", 0, 17)]


def test_pt_reference_without_torch_is_named(tmp_path):
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("torch is installed: .pt files are read")
    (tmp_path / "Conv2D_output_0.pt").write_bytes(b"not read")
    folder = read_folder(tmp_path)
    assert folder.tensors == []
    [problem] = folder.problems.items
    assert problem.file.endswith("Conv2D_output_0.pt") and "needs torch" in problem.problem


def test_stats_csvs_and_tiling_data_fill_their_tables(tmp_path):
    import json

    from analyzer.accuracy.comparison import compare_folders
    from analyzer.ingest.database import connect
    from fixtures.dumps.generate import generate

    generate(tmp_path, 4301, "drift", 8, 16)
    (tmp_path / "dump" / "stats" / "tiling_info.json").write_text(json.dumps({"conv2": {"block_dim": 8}}))
    con = connect()
    compare_folders(tmp_path / "dump" / "stats", tmp_path / "reference" / "npy", con)
    stats = con.execute(
        "SELECT slot, count(*), sum(element_count), min(nan_count) FROM tensor_stats GROUP BY slot ORDER BY slot"
    ).fetchall()
    # inputs: x 4x16x16, seven 8x16x16 maps (one per operator after conv1, two for add1), the weights 8x4x3x3
    # and 2 x 8x8x3x3, the scale 8
    inputs = 4 * 256 + 7 * 2048 + 288 + 2 * 576 + 8
    assert stats == [("input", 12, inputs, 0), ("output", 7, 7 * 2048, 0)]
    assert con.execute("SELECT op_name, block_dim FROM tiling_data").fetchall() == [("conv2", 8)]
    con = connect()
    compare_folders(tmp_path / "dump" / "native", tmp_path / "reference" / "npy", con)
    assert con.execute("SELECT op_name, size_bytes FROM tiling_data ORDER BY 1").fetchall() == [
        ("conv1", 64), ("conv2", 64), ("conv3", 64)
    ]  # fmt: skip


def test_docs_accuracy_table_model_matches_schema_toml():
    from pathlib import Path

    from analyzer.accuracy.report.table_model import END, START, render_table_model

    text = (Path(__file__).resolve().parents[1] / "docs" / "accuracy.md").read_text(encoding="utf-8")
    section = START + text.split(START, 1)[1].split(END, 1)[0] + END
    assert section == render_table_model(), "regenerate: python -m analyzer.accuracy.report.table_model"


def test_a_dump_in_two_forms_keeps_the_native_one_and_names_the_other():
    from pathlib import Path

    dump = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "accuracy_tile_fault" / "dump"
    folder = read_folder(dump)  # native/, npy/ (the same 19 tensors converted) and stats/
    assert len(folder.tensors) == 19 and {t.kind for t in folder.tensors} == {"native"}
    left = [p for p in folder.problems.items if p.severity == "warning"]
    assert len(left) == 19 and all(p.file.startswith("dump/npy/") and "the same tensor" in p.problem for p in left)
