"""A small JSON Schema checker for docs/diagnosis.schema.json (the keywords it uses; no new dependency)."""

from __future__ import annotations

import re
from typing import Any

_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "null": type(None),
}


def _is(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[name])


def schema_problems(value: Any, schema: dict[str, Any], where: str = "$") -> list[str]:
    """Where ``value`` breaks ``schema``: type, const, enum, required, properties, additionalProperties,
    items, minItems, maxItems, minimum, pattern and oneOf.

    >>> schema_problems({"a": 1}, {"type": "object", "required": ["b"], "additionalProperties": False})
    ["$: missing 'b'", "$: unexpected 'a'"]
    """
    types = schema.get("type")
    if types is not None and not any(_is(value, t) for t in ([types] if isinstance(types, str) else types)):
        return [f"{where}: {type(value).__name__} is not {types}"]
    problems = _scalar_problems(value, schema, where)
    if "oneOf" in schema:
        fits = [s for s in schema["oneOf"] if not schema_problems(value, s, where)]
        if len(fits) != 1:
            problems.append(f"{where}: fits {len(fits)} of the oneOf schemas, not exactly one")
    if isinstance(value, dict):
        problems += _object_problems(value, schema, where)
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            problems.append(f"{where}: {len(value)} items")
        for i, item in enumerate(value if "items" in schema else []):
            problems += schema_problems(item, schema["items"], f"{where}[{i}]")
    return problems


def _scalar_problems(value: Any, schema: dict[str, Any], where: str) -> list[str]:
    problems = []
    if "const" in schema and value != schema["const"]:
        problems.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if "minimum" in schema and _is(value, "number") and value < schema["minimum"]:
        problems.append(f"{where}: {value} < {schema['minimum']}")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        problems.append(f"{where}: {value!r} does not match {schema['pattern']}")
    return problems


def _object_problems(value: dict[str, Any], schema: dict[str, Any], where: str) -> list[str]:
    problems = [f"{where}: missing {k!r}" for k in schema.get("required", []) if k not in value]
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            problems += schema_problems(item, properties[key], f"{where}.{key}")
        elif extra is False:
            problems.append(f"{where}: unexpected {key!r}")
        elif isinstance(extra, dict):
            problems += schema_problems(item, extra, f"{where}.{key}")
    return problems
