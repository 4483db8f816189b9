"""The helper views, tables and macros of this package's documented ``.sql`` modules, in dependency order.

The format of a module is ``analyzer/sql_modules.py``'s. Helper names start with ``_`` (Perfetto
style: everything else in the database is the normalized schema).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from analyzer.sql_modules import SqlDefinition, SqlModuleError, parse_module


def _in_dependency_order(definitions: list[SqlDefinition]) -> tuple[SqlDefinition, ...]:
    """Each definition after those its SQL names; otherwise in module and file order."""
    names = {d.name for d in definitions}
    needs = {d.name: {n for n in names if n != d.name and re.search(rf"\b{n}\b", d.sql)} for d in definitions}
    placed: list[SqlDefinition] = []
    done: set[str] = set()
    while len(placed) < len(definitions):
        ready = next((d for d in definitions if d.name not in done and needs[d.name] <= done), None)
        if ready is None:
            cycle = sorted(n for n in names if n not in done)
            raise SqlModuleError(f"helper definitions depend on each other in a cycle: {', '.join(cycle)}")
        placed.append(ready)
        done.add(ready.name)
    return tuple(placed)


@cache
def helper_modules() -> tuple[tuple[str, str, tuple[SqlDefinition, ...]], ...]:
    """(module stem, header comment, definitions) of every ``.sql`` module of this package, by name."""
    modules = []
    for entry in sorted(resources.files(__package__).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".sql"):
            stem = entry.name.removesuffix(".sql")
            header, definitions = parse_module(entry.read_text(encoding="utf-8"), stem, typed=True)
            modules.append((stem, header, tuple(definitions)))
    return tuple(modules)


@cache
def helper_definitions() -> tuple[SqlDefinition, ...]:
    """Every helper definition, each after the ones it reads."""
    definitions = [d for _stem, _header, ds in helper_modules() for d in ds]
    seen: set[str] = set()
    for d in definitions:
        if not d.name.startswith("_"):
            raise SqlModuleError(f"{d.module}.sql: helper {d.name} must start with '_'")
        if d.name in seen:
            raise SqlModuleError(f"{d.module}.sql: {d.name} is defined twice")
        seen.add(d.name)
    return _in_dependency_order(definitions)
