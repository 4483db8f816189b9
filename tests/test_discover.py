"""Discovery: every export layout under a path, stable ids, one run per export."""

from __future__ import annotations

from analyzer.ingest.metadata.discover import discover

# The native msprof export of one workload collected once per --aic-metrics group: group -> its run.
AIC_METRICS_RUNS = {
    "PipeUtilization": "PROF_000001_20260823165326062_00625538CIGQAHCJ",
    "ArithmeticUtilization": "PROF_000001_20260823165350017_00625898KGAPBKDQ",
    "Memory": "PROF_000001_20260823165413436_00626258NIRJNPIC",
    "MemoryL0": "PROF_000001_20260823165436070_00626618BPGFDORO",
    "MemoryUB": "PROF_000001_20260823165459085_00626978EGNAOKAL",
    "L2Cache": "PROF_000001_20260823165523228_00627338KRCOPCPN",
    "ResourceConflictRatio": "PROF_000001_20260823165547329_00627699PRQPJOAC",
    "Sample": "PROF_000001_20260823165611236_00628059FDLKIHNK",
}


def _touch(path, text="x\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_discover_real_tree_finds_every_export(real_dir):
    found = {s.source_id: (s.producer, s.export_type, s.layout) for s in discover(real_dir)}
    assert found == {
        "msprof_db_2023": ("msprof", "db", "bare_db"),
        "torch_npu_arith_2023": ("torch_npu", "text", "ascend_profiler_output"),
        "torch_npu_level0_rank0_text": ("torch_npu", "text", "ascend_profiler_output"),
        "torch_npu_level1_rank0_db": ("torch_npu", "db", "ascend_profiler_output"),
        "torch_npu_level1_rank0_text": ("torch_npu", "text", "ascend_profiler_output"),
        "torch_npu_level1_rank1_text": ("torch_npu", "text", "ascend_profiler_output"),
        "torch_npu_llm_cann83_rank0": ("torch_npu", "text", "ascend_profiler_output"),
        "torch_npu_memoryl0_2023": ("torch_npu", "text", "ascend_profiler_output"),
        "torch_npu_trace_2024": ("torch_npu", "text", "ascend_profiler_output"),
        # msprof_native_aic_metrics_2026: one PROF_* run per --aic-metrics group, under PROF_GROUP_*/<group>/
        **{run: ("msprof", "text", "mindstudio_profiler_output") for run in AIC_METRICS_RUNS.values()},
    }


def test_discover_aic_metrics_group_gives_each_run_its_group_files(real_dir):
    """Each group's run keeps its own files: task_time only in PipeUtilization, the per-core
    utilisation CSVs only in the sample-based run."""
    group = real_dir / "msprof_native_aic_metrics_2026" / "PROF_GROUP_20260823_165254"
    sources = {s.source_id: s for s in discover(group)}
    assert set(sources) == set(AIC_METRICS_RUNS.values())
    files = {g: set(sources[r].files) for g, r in AIC_METRICS_RUNS.items()}
    assert files["PipeUtilization"] == {"op_summary", "op_statistic", "api_statistic", "task_time"}
    assert files["Sample"] == {"op_summary", "ai_core_utilization", "ai_vector_core_utilization"}
    assert all(files[g] == {"op_summary"} for g in AIC_METRICS_RUNS if g not in ("PipeUtilization", "Sample"))


def test_discover_ascend_profiler_output_path_points_at_parent(real_dir):
    (source,) = discover(real_dir / "torch_npu_level1_rank0_text" / "ASCEND_PROFILER_OUTPUT")
    assert source.source_id == "torch_npu_level1_rank0_text"
    assert "profiler_info" in source.metadata_files


def test_discover_msprof_layout_globs_timestamps_and_slices(tmp_path):
    prof = tmp_path / "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA"
    mso = prof / "mindstudio_profiler_output"
    for name in (
        "op_summary_slice_0_20260605161737.csv",
        "op_summary_slice_1_20260605161737.csv",
        "msprof_20260605161734.json",
        "msprof_tx_20260605161734.json",
        "step_trace_20260605161737.csv",
        "task_time_20260605161737.csv",
        "api_statistic_20260605161737.csv",
    ):
        _touch(mso / name)
    _touch(prof / "msprof_20260605161740.db")
    (source,) = discover(tmp_path)
    assert source.producer == "msprof" and source.export_type == "text"
    assert [p.name for p in source.files["op_summary"]] == [
        "op_summary_slice_0_20260605161737.csv",
        "op_summary_slice_1_20260605161737.csv",
    ]
    assert [p.name for p in source.files["timeline"]] == ["msprof_20260605161734.json"]
    assert "step_trace" in source.files and "task_time" in source.files


def test_discover_multi_rank_tree_gives_one_source_per_rank(tmp_path):
    for rank in range(3):
        root = tmp_path / "job" / f"node_{rank}_20250101000000000_ascend_pt"
        _touch(root / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv")
        _touch(root / f"profiler_info_{rank}.json", "{}")
        # the embedded msprof run of a torch_npu export is part of it, not a second export
        _touch(root / "PROF_000001_x" / "mindstudio_profiler_output" / "op_summary_1.csv")
    ids = [s.source_id for s in discover(tmp_path)]
    assert ids == [f"node_{r}_20250101000000000_ascend_pt" for r in range(3)]


def test_discover_same_folder_names_get_path_hashes_independent_of_location(tmp_path):
    for parent in ("a", "b"):
        _touch(tmp_path / parent / "run" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv")
    first = [s.source_id for s in discover(tmp_path)]
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (tmp_path / "a").rename(moved / "a")
    (tmp_path / "b").rename(moved / "b")
    assert [s.source_id for s in discover(moved)] == first
    assert len(set(first)) == 2 and all(i.startswith("run-") for i in first)


def test_discover_mindspore_and_bare_folder(tmp_path):
    _touch(tmp_path / "w_1_ascend_ms" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv")
    _touch(tmp_path / "loose" / "op_summary_20260101.csv")
    got = {s.source_id: (s.producer, s.layout) for s in discover(tmp_path)}
    assert got == {"w_1_ascend_ms": ("mindspore", "ascend_profiler_output"), "loose": ("msprof", "bare_csv")}


def test_discover_unrelated_folder_finds_nothing(tmp_path):
    _touch(tmp_path / "notes.txt")
    _touch(tmp_path / "data" / "table.csv")
    assert discover(tmp_path) == []


def test_collections_never_exported_are_found_and_exported_ones_are_not(tmp_path):
    """The note of a folder without an export: a raw msprof PROF_* folder (device data, no
    mindstudio_profiler_output) and a *_ascend_pt folder without ASCEND_PROFILER_OUTPUT are named, the framework's
    own PROF_* folder is not named again, and collections already exported are left out."""
    from analyzer.ingest.metadata.raw_collections import unexported, unexported_note

    raw = tmp_path / "job" / "node0" / "PROF_000001_A" / "device_0" / "data"
    raw.mkdir(parents=True)
    framework = tmp_path / "job" / "node1" / "w_1_2_ascend_pt"
    (framework / "PROF_000002_B" / "host" / "data").mkdir(parents=True)
    exported = tmp_path / "job" / "node2" / "PROF_000003_C"
    (exported / "device_0" / "data").mkdir(parents=True)
    (exported / "mindstudio_profiler_output").mkdir()
    (exported / "mindstudio_profiler_output" / "op_summary_1.csv").write_text("Op Name\n")
    parsed = tmp_path / "job" / "node3" / "w_3_4_ascend_pt"
    (parsed / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (parsed / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").write_text("Name\n")
    found = unexported(tmp_path)
    assert found == [(raw.parent.parent, "msprof"), (framework, "framework")]
    note = unexported_note(tmp_path)
    assert "2 such folders" in note and f"msprof --export=on --output={raw.parent.parent}" in note
    assert unexported(exported) == [] and unexported(parsed) == [] and unexported_note(parsed) == ""


def test_collections_whose_export_folder_is_empty_count_as_never_exported(tmp_path):
    """An export or parse stopped before its first file leaves its output folder empty: the collection is named
    as never exported, a framework's as the framework's (its own PROF_* folder not suggested to msprof)."""
    from analyzer.ingest.metadata.raw_collections import unexported, unexported_note

    prof = tmp_path / "a" / "PROF_000001_A"
    (prof / "device_0" / "data").mkdir(parents=True)
    (prof / "mindstudio_profiler_output").mkdir()
    framework = tmp_path / "b" / "w_1_2_ascend_pt"
    (framework / "PROF_000002_B" / "device_0" / "data").mkdir(parents=True)
    (framework / "ASCEND_PROFILER_OUTPUT").mkdir()
    assert unexported(tmp_path) == [(prof, "msprof"), (framework, "framework")]
    assert "analyse(profiler_path=" in unexported_note(tmp_path / "b")
    assert "msprof --export=on" not in unexported_note(tmp_path / "b")


def test_msprof_analyze_output_is_named_and_a_collection_comes_first(tmp_path):
    """A folder that is, or holds two levels down, msprof-analyze's cluster_analysis_output is named as its output;
    a never-exported collection beside it is the note (the export is what to give); a folder of neither has none."""
    from analyzer.ingest.metadata.no_export_note import no_export_note

    out = tmp_path / "runs" / "analysis" / "cluster_analysis_output"
    out.mkdir(parents=True)
    assert "cluster_analysis_output is msprof-analyze's output" in no_export_note(tmp_path / "runs")
    assert "cluster_analysis_output is msprof-analyze's output" in no_export_note(out)
    assert no_export_note(tmp_path / "runs" / "analysis" / "cluster_analysis_output_old") == ""
    (tmp_path / "runs" / "PROF_000001_A" / "device_0" / "data").mkdir(parents=True)
    assert "msprof --export=on" in no_export_note(tmp_path / "runs")
    (tmp_path / "elsewhere" / "a" / "b" / "cluster_analysis_output").mkdir(parents=True)
    assert no_export_note(tmp_path / "elsewhere") == ""  # three levels down: not looked at
