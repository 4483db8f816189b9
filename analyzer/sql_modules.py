"""Documented SQL modules: ``.sql`` files of views, tables and table macros, each under a parsed doc block.

A module is a header comment (what the module is about), then definitions. Each definition opens with
a doc block in a fixed format, Perfetto stdlib style::

    -- @table _busy_intervals            (or @view NAME, or @macro NAME(ARGS))
    -- @internal                         (optional: a step of other helpers, which rules must not read)
    -- @empty_without memory_records     (optional, a @table's: input tables without a row of which it has none)
    -- What the relation holds, in prose (any number of lines).
    -- @column run_id  VARCHAR  the run  (one per column it returns, in order, with its DuckDB type when the
    -- @column ops.*  every column of ops    module is typed; more lines continue it; X.* stands for
    SELECT ...;                              every column of X; the body runs up to the next definition)

``@table``: computed once into a TEMP table (read many times); ``@view``: a TEMP view (cheap
filters, or relations read once and filtered before their expensive joins); ``@macro``: a DuckDB
table macro (``CREATE MACRO name(args) AS TABLE body``). A definition is public (rules may read it)
unless marked ``@internal``. ``@empty_without``: tables whose emptiness alone makes the table empty, so
that it is created empty without its query when one of them holds no row (``rule_engine/views/empty_tables.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analyzer.errors import TriageError

_HEAD = re.compile(r"-- @(macro|view|table) (\w+)(?:\(([\w, ]*)\))?\s*")
_EMPTY_WITHOUT = re.compile(r"@empty_without (\w+(?:, \w+)*)")
_COLUMN = re.compile(r"@column (\S+)\s+(\S.*)")
# A typed column: its DuckDB type as DESCRIBE spells it (STRUCT stands for any STRUCT(...)).
_TYPED_COLUMN = re.compile(r"@column (\S+)\s+([A-Z][A-Z0-9_]*(?:\([0-9, ]+\))?(?:\[\])*)\s+(\S.*)")


@dataclass(frozen=True)
class SqlDefinition:
    """One view, table or macro: its kind, name, module, documentation and SQL body."""

    kind: str  # 'table' | 'view' | 'macro'
    name: str
    module: str  # the .sql file's stem
    description: str
    columns: tuple[tuple[str, str], ...]  # (column name or 'X.*', its documentation)
    sql: str
    params: str = ""  # a macro's arguments
    types: tuple[str, ...] = ()  # each column's DuckDB type ('' for X.*), in a typed module
    internal: bool = False  # a step of other definitions, not for rules
    empty_without: tuple[str, ...] = ()  # input tables without a row of which a @table has none

    def create_statement(self) -> str:
        """The SQL creating it in a connection (TEMP: never written into a database file)."""
        if self.kind == "macro":
            return f"CREATE OR REPLACE TEMP MACRO {self.name}({self.params}) AS TABLE {self.sql}"
        return f"CREATE OR REPLACE TEMP {self.kind.upper()} {self.name} AS {self.sql}"


class SqlModuleError(TriageError, ValueError):
    """A .sql module whose doc blocks do not follow the format."""


def _doc_text(line: str) -> str:
    return line[2:].strip()


def parse_module(text: str, module: str, typed: bool = False) -> tuple[str, list[SqlDefinition]]:
    """(the module's header comment, paragraphs apart, and its definitions in file order) of one module's text;
    ``typed``: every @column line but X.* gives its type.

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
        definitions.append(_definition(lines[start:end], start + 1, module, typed))
    return header, definitions


def _column(text: str, typed: bool, where: str) -> list[str] | None:
    """[name, type, doc] of an @column line ('' type for X.* or an untyped module), else None."""
    column = _COLUMN.fullmatch(text)
    if not column or not typed or column[1].endswith(".*"):
        return [column[1], "", column[2]] if column else None
    with_type = _TYPED_COLUMN.fullmatch(text)
    if not with_type:
        raise SqlModuleError(f"{where}: {text!r} gives no type (-- @column NAME TYPE  doc)")
    return [with_type[1], with_type[2], with_type[3]]


def _definition(lines: list[str], line_no: int, module: str, typed: bool) -> SqlDefinition:
    kind, name, params = _HEAD.fullmatch(lines[0]).groups()  # type: ignore[union-attr]
    where = f"{module}.sql line {line_no} ({name})"
    description: list[str] = []
    columns: list[list[str]] = []
    tags: list[str] = []  # those before the description: @internal, @empty_without
    body = 1
    while body < len(lines) and lines[body].startswith("--"):
        text = _doc_text(lines[body])
        column = _column(text, typed, where)
        if column:
            columns.append(column)
        elif text.split()[0] in ("@internal", "@empty_without") and not columns and not description:
            tags.append(text)
        elif text.startswith("@"):
            raise SqlModuleError(
                f"{where}: unknown tag {text.split()[0]} (known: @internal, then a @table's "
                "@empty_without TABLE[, TABLE], before the description; then @column)"
            )
        elif text:
            if columns:
                columns[-1][2] += " " + text
            else:
                description.append(text)
        body += 1
    stray = next((x for x in lines[body:] if x.startswith("-- @")), None)
    if stray:
        raise SqlModuleError(f"{where}: {stray!r} is not a definition line (-- @table|@view|@macro NAME)")
    sql = "\n".join(lines[body:]).strip().rstrip(";").strip()
    if not description or not columns or not sql:
        missing = "description" if not description else "@column lines" if not columns else "SQL body"
        raise SqlModuleError(f"{where}: no {missing}")
    if (kind == "macro") != (params is not None):
        raise SqlModuleError(f"{where}: a @macro takes (arguments); a @view or @table does not")
    return SqlDefinition(
        kind,
        name,
        module,
        " ".join(description),
        tuple((c, d) for c, _t, d in columns),
        sql,
        params or "",
        tuple(t for _c, t, _d in columns),
        "@internal" in tags,
        _empty_without(tags, kind, where),
    )


def _empty_without(tags: list[str], kind: str, where: str) -> tuple[str, ...]:
    """The tables of the definition's @empty_without tag, if it has one (only a @table may)."""
    for tag in tags:
        if tag.startswith("@empty_without"):
            tables = _EMPTY_WITHOUT.fullmatch(tag)
            if not tables or kind != "table":
                raise SqlModuleError(f"{where}: {tag!r}: only a @table says -- @empty_without TABLE[, TABLE]")
            return tuple(tables[1].split(", "))
    return ()
