"""npu-triage: offline diagnosis of Huawei Ascend NPU profiling exports."""

__version__ = "0.1.0"
