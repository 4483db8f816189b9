"""How the TOML declaration files (``schema.toml``, ``runs/catalog_schema.toml``, ``csv/declared_tables.toml``)
list their entries: in order, each a list of values, or a string naming a set of entries under ``[shared]``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def shared_sets(declarations: dict[str, Any], make: Callable[[list], T]) -> dict[str, tuple[T, ...]]:
    """The ``[shared]`` sets of a declaration file, each entry made by ``make``."""
    return {key: tuple(make(entry) for entry in entries) for key, entries in declarations["shared"].items()}


def expand(entries: list, shared: dict[str, tuple[T, ...]], make: Callable[[list], T]) -> tuple[T, ...]:
    """The items of a declared list: an entry that is a list is one item (``make(entry)``), a string is
    the shared set it names.

    >>> expand([["a"], "pair", ["d"]], {"pair": ("b", "c")}, lambda e: e[0])
    ('a', 'b', 'c', 'd')
    """
    return tuple(item for entry in entries for item in (shared[entry] if isinstance(entry, str) else (make(entry),)))
