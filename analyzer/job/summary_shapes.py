"""The typed shapes of a rank's communication summaries: an op entry of communication.json and a link of
communication_matrix.json, numbers still as their text, as the job's readers of both forms build them."""

from __future__ import annotations

import json

TIME_FIELDS = ("Elapse Time(ms)", "Transit Time(ms)", "Wait Time(ms)", "Synchronization Time(ms)", "Idle Time(ms)")
TRANSPORT_FIELDS = ("Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)", "Large Packet Ratio")
LINK_FIELDS = ("Transport Type", "Transit Size(MB)", "Transit Time(ms)", "Bandwidth(GB/s)", "Op Name")


def _struct(fields: dict[str, str]) -> str:
    return "STRUCT(" + ", ".join(f'"{name}" {type_}' for name, type_ in fields.items()) + ")"


def _nested(leaf: str, levels: int) -> str:
    """A json_transform shape: ``levels`` maps keyed by text around ``leaf``, as a JSON string."""
    type_ = leaf
    for _ in range(levels):
        type_ = f"MAP(VARCHAR, {type_})"
    return json.dumps(type_)


# One op: its time info and its per-transport bandwidth info. Numbers are read as their text and checked
# (value_checks.py): a NaN, a negative or a word is named, not used.
COMM_OP_TYPE = _struct(
    {
        "Communication Time Info": _struct({"Start Timestamp(us)": "VARCHAR", **dict.fromkeys(TIME_FIELDS, "VARCHAR")}),
        "Communication Bandwidth Info": f"MAP(VARCHAR, {_struct(dict.fromkeys(TRANSPORT_FIELDS, 'VARCHAR'))})",
    }
)
# One matrix entry: 'src-dst' (ranks within the group) -> its link.
MATRIX_OP_TYPE = f"MAP(VARCHAR, {_struct(dict.fromkeys(LINK_FIELDS, 'VARCHAR'))})"

# communication.json: step -> kind -> op -> COMM_OP_TYPE. Each file is parsed once, into these types only
# (json_transform); an entry of another shape reads as NULL.
COMM_SHAPE = _nested(COMM_OP_TYPE, 3)
# communication_matrix.json: step -> kind -> '<op>-<stat>@<group>' -> MATRIX_OP_TYPE.
MATRIX_SHAPE = _nested(MATRIX_OP_TYPE, 3)
