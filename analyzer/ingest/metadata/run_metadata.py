"""Collection settings and versions from profiler_info*.json, profiler_metadata.json and info.json."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.ingest.metadata import metadata_values
from analyzer.ingest.model import ReadContext

MAX_AI_CORES = 4096  # far above any Ascend chip (a 910B has 20 to 25): a larger count is a wrong value

# torch_npu / AscendCL enum names -> msprof's --aic-metrics names.
AIC_METRICS = {
    "ACL_AICORE_PIPE_UTILIZATION": "PipeUtilization",
    "ACL_AICORE_ARITHMETIC_UTILIZATION": "ArithmeticUtilization",
    "ACL_AICORE_MEMORY_BANDWIDTH": "Memory",
    "ACL_AICORE_L0B_AND_WIDTH": "MemoryL0",
    "ACL_AICORE_RESOURCE_CONFLICT_RATIO": "ResourceConflictRatio",
    "ACL_AICORE_MEMORY_UB": "MemoryUB",
    "ACL_AICORE_L2_CACHE": "L2Cache",
    "ACL_AICORE_MEMORY_ACCESS": "MemoryAccess",
    "ACL_AICORE_NONE": None,
}


@dataclass
class RunMetadata:
    """What the export's metadata files say about the run; every field may be unknown."""

    rank_id: int | None = None
    profiler_level: str | None = None
    aic_metrics: str | None = None
    aic_mode: str | None = None
    export_type: str | None = None
    cann_version: str | None = None
    torch_npu_version: str | None = None
    chip: str | None = None
    ai_core_count: int | None = None
    model_name: str | None = None
    batch_size: int | None = None
    extra: dict[str, str] = field(default_factory=dict)


def _load_json(path: Path, ctx: ReadContext) -> dict | None:
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        where = f"line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        where = f"byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else where
        what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        ctx.report(path, where, "warning", f"metadata file unreadable: {what}", "collection settings stay unknown")
        return None
    if not isinstance(data, dict):
        ctx.report(path, "", "warning", "metadata file is not a JSON object", "collection settings stay unknown")
        return None
    ctx.mark_read(path)
    return data


def _user_labels(data: dict, meta: RunMetadata, path: Path, ctx: ReadContext) -> None:
    """model_name and batch_size, where the metadata gives them."""
    if data.get("model_name") is not None:
        meta.model_name = metadata_values.text(data["model_name"], "model_name", path, ctx)
    if data.get("batch_size") is not None:
        meta.batch_size = metadata_values.whole_number(data["batch_size"], "batch_size", path, ctx)


def _profiler_info(data: dict, meta: RunMetadata) -> None:
    config = data.get("config")
    config = config if isinstance(config, dict) else {}
    exp = config.get("experimental_config")
    exp = exp if isinstance(exp, dict) else {}
    _experimental_config(exp, meta)
    for key in ("cann_version", "CANN_VERSION"):
        if isinstance(data.get(key), str):
            meta.cann_version = data[key]
    if isinstance(data.get("torch_npu_version"), str):
        meta.torch_npu_version = data["torch_npu_version"]
    rank = data.get("rank_id")
    if isinstance(rank, int) and not isinstance(rank, bool) and 0 <= rank <= metadata_values.INT_MAX:
        meta.rank_id = rank
    meta.aic_mode = "task-based"  # torch_npu always collects task-based


def _experimental_config(exp: dict, meta: RunMetadata) -> None:
    """profiler_info's experimental_config: profiler level, AI Core metric set, export type."""
    level = exp.get("_profiler_level") or exp.get("profiler_level")
    if isinstance(level, str):
        meta.profiler_level = level
    aic = exp.get("_aic_metrics") or exp.get("aic_metrics")
    if isinstance(aic, str):
        meta.aic_metrics = AIC_METRICS.get(aic, aic)
    et = exp.get("_export_type") or exp.get("export_type")
    if isinstance(et, list) and et:
        et = et[0]
    if isinstance(et, str):
        meta.export_type = et


def _info_json(data: dict, meta: RunMetadata, path: Path, ctx: ReadContext) -> None:
    devices = data.get("DeviceInfo")
    if isinstance(devices, list) and devices and isinstance(devices[0], dict):
        dev = devices[0]
        key = "ai_core_num" if dev.get("ai_core_num") else "aic_num"
        if dev.get(key):  # 0 or absent: not recorded
            meta.ai_core_count = metadata_values.whole_number(dev[key], key, path, ctx, high=MAX_AI_CORES)
    for key in ("chip_name", "npu_type", "platform_version"):
        if isinstance(data.get(key), str) and data[key]:
            meta.chip = _platform_chip(data[key]) if key == "platform_version" else data[key]
            break


# msprof's platform_version codes (its ChipModel enum) whose chip is known: 5 is CHIP_V4_1_0, Atlas A2 (the
# real native export in ../shared/real says 5 on a 910B). The others stay codes, named as such.
PLATFORM_CHIPS = {"5": "Ascend910B"}


def _platform_chip(value: str) -> str:
    """The chip of an info.json platform_version: a code's chip name where known, else 'platform_version N';
    a value that is no code (a chip name) as it is."""
    code = value.strip()
    return PLATFORM_CHIPS.get(code, f"platform_version {code}") if code.isdigit() else value


def read_run_metadata(ctx: ReadContext) -> RunMetadata:
    """Everything the metadata files of ``ctx.source`` say; problems go to ``ctx``."""
    meta = RunMetadata()
    src = ctx.source
    for path in src.metadata_files.get("profiler_info", ()):
        data = _load_json(path, ctx)
        if data is not None:
            _profiler_info(data, meta)
            _user_labels(data, meta, path, ctx)
            m = re.search(r"profiler_info_(\d+)\.json$", path.name)
            if m and meta.rank_id is None:
                meta.rank_id = int(m.group(1))
    for path in src.metadata_files.get("profiler_metadata", ()):
        data = _load_json(path, ctx)
        if data:
            _user_labels(data, meta, path, ctx)
    for path in src.metadata_files.get("info_json", ()):
        data = _load_json(path, ctx)
        if data is not None:
            _info_json(data, meta, path, ctx)
    return meta
