"""The DumpData message class, built at import from the project's dump_data.proto (no protoc, no _pb2)."""

from __future__ import annotations

import re
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PROTO_PATH = Path(__file__).with_name("dump_data.proto")
_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "int32": _F.TYPE_INT32,
    "uint32": _F.TYPE_UINT32,
    "int64": _F.TYPE_INT64,
    "uint64": _F.TYPE_UINT64,
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
    "bool": _F.TYPE_BOOL,
}
_MESSAGE = re.compile(r"message\s+(\w+)\s*\{(.*?)\}", re.S)
_FIELD = re.compile(r"(repeated\s+)?(\w+)\s+(\w+)\s*=\s*(\d+)\s*;")


def file_descriptor(text: str) -> descriptor_pb2.FileDescriptorProto:
    """The FileDescriptorProto of a flat proto3 file (top-level messages of scalar and message fields)."""
    body = re.sub(r"//[^\n]*", "", text)
    found = re.search(r"package\s+([\w.]+)\s*;", body)
    if found is None:
        raise ValueError(f"{PROTO_PATH.name}: no package line")
    package = found.group(1)
    fd = descriptor_pb2.FileDescriptorProto(name=PROTO_PATH.name, package=package, syntax="proto3")
    for name, fields in _MESSAGE.findall(body):
        message = fd.message_type.add(name=name)
        for repeated, type_name, field_name, number in _FIELD.findall(fields):
            field = message.field.add(name=field_name, number=int(number), json_name=_camel(field_name))
            field.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
            if type_name in _SCALARS:
                field.type = _SCALARS[type_name]
            else:
                field.type, field.type_name = _F.TYPE_MESSAGE, f".{package}.{type_name}"
    return fd


def _camel(name: str) -> str:
    """protoc's json_name of a field.

    >>> _camel("original_shape")
    'originalShape'
    """
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def _dump_data_class() -> type:
    pool = descriptor_pool.DescriptorPool()
    fd = file_descriptor(PROTO_PATH.read_text(encoding="utf-8"))
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{fd.package}.DumpData"))


DumpData = _dump_data_class()
