"""The helper definitions read from this package's documented ``.sql`` modules, in dependency order.

A module is a header comment (what the module is about), then definitions. Each definition opens with
a doc block in a fixed format, Perfetto stdlib style::

    -- @table _busy_intervals            (or @view NAME, or @macro NAME(ARGS))
    -- What the relation holds, in prose (any number of lines).
    -- @column run_id    the run          (one per column it returns, in order; more lines continue it;
    -- @column ops.*     every column of ops   X.* stands for every column of X)
    SELECT ...;                          (the body, up to the next definition)

``@table``: computed once into a TEMP table (rules read it many times); ``@view``: a TEMP view
(cheap filters, or relations a rule filters before their expensive joins); ``@macro``: a DuckDB
table macro (``CREATE MACRO name(args) AS TABLE body``), the interval algebra the others share.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

_HEAD = re.compile(r"-- @(macro|view|table) (_\w+)(?:\(([\w, ]*)\))?\s*")
_COLUMN = re.compile(r"@column (\S+)\s+(\S.*)")


@dataclass(frozen=True)
class HelperDefinition:
    """One helper relation or macro: its kind, name, module, documentation and SQL body."""

    kind: str  # 'table' | 'view' | 'macro'
    name: str
    module: str  # the .sql file's stem
    description: str
    columns: tuple[tuple[str, str], ...]  # (column name or 'X.*', its documentation)
    sql: str
    params: str = ""  # a macro's arguments

    def create_statement(self) -> str:
        """The SQL creating it in a connection (TEMP: never written into a database file)."""
        if self.kind == "macro":
            return f"CREATE OR REPLACE TEMP MACRO {self.name}({self.params}) AS TABLE {self.sql}"
        return f"CREATE OR REPLACE TEMP {self.kind.upper()} {self.name} AS {self.sql}"


class HelperModuleError(ValueError):
    """A .sql module whose doc blocks do not follow the format."""


def _doc_text(line: str) -> str:
    return line[2:].strip()


def parse_module(text: str, module: str) -> tuple[str, list[HelperDefinition]]:
    """(the module's header comment, paragraphs apart, and its definitions in file order) of one module's text.

    >>> text = "-- Demo.\\n\\n-- @view _x\\n-- One row.\\n-- @column n  a number\\nSELECT 1 AS n;\\n"
    >>> header, [d] = parse_module(text, "demo")
    >>> header, d.kind, d.name, d.description, d.columns, d.sql
    ('Demo.', 'view', '_x', 'One row.', (('n', 'a number'),), 'SELECT 1 AS n')
    """
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _HEAD.fullmatch(line)]
    head = [_doc_text(x) for x in lines[: starts[0] if starts else len(lines)] if x.startswith("--")]
    header = "\n\n".join(" ".join(p.split("\n")) for p in "\n".join(head).split("\n\n"))
    definitions = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        definitions.append(_definition(lines[start:end], start + 1, module))
    return header, definitions


def _definition(lines: list[str], line_no: int, module: str) -> HelperDefinition:
    kind, name, params = _HEAD.fullmatch(lines[0]).groups()  # type: ignore[union-attr]
    where = f"{module}.sql line {line_no} ({name})"
    description: list[str] = []
    columns: list[list[str]] = []
    body = 1
    while body < len(lines) and lines[body].startswith("--"):
        text = _doc_text(lines[body])
        column = _COLUMN.fullmatch(text)
        if column:
            columns.append([column[1], column[2]])
        elif text.startswith("@"):
            raise HelperModuleError(f"{where}: unknown tag {text.split()[0]} (known: @column)")
        elif text:
            if columns:
                columns[-1][1] += " " + text
            else:
                description.append(text)
        body += 1
    sql = "\n".join(lines[body:]).strip().rstrip(";").strip()
    if not description or not columns or not sql:
        missing = "a description" if not description else "@column lines" if not columns else "a SQL body"
        raise HelperModuleError(f"{where}: no {missing}")
    if (kind == "macro") != (params is not None):
        raise HelperModuleError(f"{where}: a @macro takes (arguments); a @view or @table does not")
    return HelperDefinition(
        kind, name, module, " ".join(description), tuple((c, d) for c, d in columns), sql, params or ""
    )


def _in_dependency_order(definitions: list[HelperDefinition]) -> tuple[HelperDefinition, ...]:
    """Each definition after those its SQL names; otherwise in module and file order."""
    names = {d.name for d in definitions}
    needs = {d.name: {n for n in names if n != d.name and re.search(rf"\b{n}\b", d.sql)} for d in definitions}
    placed: list[HelperDefinition] = []
    done: set[str] = set()
    while len(placed) < len(definitions):
        ready = next((d for d in definitions if d.name not in done and needs[d.name] <= done), None)
        if ready is None:
            cycle = sorted(n for n in names if n not in done)
            raise HelperModuleError(f"helper definitions depend on each other in a cycle: {', '.join(cycle)}")
        placed.append(ready)
        done.add(ready.name)
    return tuple(placed)


@cache
def helper_modules() -> tuple[tuple[str, str, tuple[HelperDefinition, ...]], ...]:
    """(module stem, header comment, definitions) of every ``.sql`` module of this package, by name."""
    modules = []
    for entry in sorted(resources.files(__package__).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".sql"):
            stem = entry.name.removesuffix(".sql")
            header, definitions = parse_module(entry.read_text(encoding="utf-8"), stem)
            modules.append((stem, header, tuple(definitions)))
    return tuple(modules)


@cache
def helper_definitions() -> tuple[HelperDefinition, ...]:
    """Every helper definition, each after the ones it reads."""
    definitions = [d for _stem, _header, ds in helper_modules() for d in ds]
    seen: set[str] = set()
    for d in definitions:
        if d.name in seen:
            raise HelperModuleError(f"{d.module}.sql: {d.name} is defined twice")
        seen.add(d.name)
    return _in_dependency_order(definitions)
