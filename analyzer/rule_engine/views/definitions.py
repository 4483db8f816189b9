"""The helper views, tables and macros of this package's documented ``.sql`` modules, in dependency order.

The format of a module is ``analyzer/sql_modules.py``'s. Helper names start with ``_`` (Perfetto
style: everything else in the database is the normalized schema).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from importlib import resources

from analyzer.sql_modules import SqlDefinition, SqlModuleError, parse_module


def _named_in(sql: str, names: Iterable[str]) -> set[str]:
    """Those of ``names`` (lower case, as every helper's is) that ``sql`` names as a word, in any case: DuckDB's
    names are not case-sensitive."""
    return {word.lower() for word in re.findall(r"\w+", sql)}.intersection(names)


def _in_dependency_order(definitions: list[SqlDefinition]) -> tuple[SqlDefinition, ...]:
    """Each definition after those its SQL names; otherwise in module and file order."""
    names = {d.name for d in definitions}
    needs = {d.name: _named_in(d.sql, names) - {d.name} for d in definitions}
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


@cache
def _helper_reads() -> dict[str, frozenset[str]]:
    """Per helper, the helpers it reads, directly or through others (computed in dependency order)."""
    reads: dict[str, frozenset[str]] = {}
    for d in helper_definitions():
        direct = _named_in(d.sql, reads)
        reads[d.name] = frozenset(direct).union(*(reads[n] for n in direct))
    return reads


def helpers_read(texts: Iterable[str]) -> frozenset[str]:
    """The helpers that the SQL ``texts`` name, with every helper those read in turn."""
    reads = _helper_reads()
    named = set().union(*(_named_in(text, reads) for text in texts))
    return frozenset(named).union(*(reads[n] for n in named))
