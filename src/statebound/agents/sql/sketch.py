"""The pieces the scoped SQL machine builds a query from, and the query itself.

Observations from the environment are read back as rows (:func:`parse_rows`); ``DESC`` rows
become :class:`Column` s; :func:`lookup_sql` asks in one statement which text columns hold the
question's literal values; :class:`Sketch` renders the query. Identifiers are quoted with
backticks, which MySQL and the SQLite backend both read.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Column", "Sketch", "columns_of", "lookup_sql", "parse_rows", "quote", "sql_literal"]

_NUMERIC_TYPES = ("int", "real", "float", "double", "decimal", "numeric", "number", "bit")
_OBSERVATION = "Observation: "


def parse_rows(observation: str) -> list[tuple[Any, ...]] | None:
    """The rows an observation shows (``str(rows)`` of at most 25 rows), or None for an error or
    a statement without rows. MySQL's ``Decimal(...)`` and ``datetime...(...)`` values become text."""
    text = observation.removeprefix(_OBSERVATION).strip()
    if not text.startswith("["):
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        text = re.sub(r"Decimal\('([^']*)'\)", r"'\1'", text)
        text = re.sub(r"datetime\.\w+\([^)]*\)", lambda m: repr(m.group(0)), text)
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return None
    if not isinstance(value, list):
        return None
    return [tuple(row) if isinstance(row, list | tuple) else (row,) for row in value]


@dataclass(frozen=True, slots=True)
class Column:
    """A column of the table being queried, as ``DESC`` shows it."""

    name: str
    type: str

    @property
    def numeric(self) -> bool:
        return any(kind in self.type.lower() for kind in _NUMERIC_TYPES)

    @property
    def comparable(self) -> bool:
        """Numbers, and text that holds years or dates (Spider stores some as text)."""
        return self.numeric or bool(re.search(r"year|date|age|time", self.name, re.IGNORECASE))


def columns_of(rows: Sequence[tuple[Any, ...]]) -> tuple[Column, ...]:
    """The columns of ``DESC`` rows (name and type first)."""
    return tuple(Column(str(row[0]), str(row[1]) if len(row) > 1 else "") for row in rows if row)


def quote(name: str) -> str:
    """An identifier in backticks."""
    return "`" + name.replace("`", "``") + "`"


def sql_literal(value: Any) -> str:
    """A value as SQL: numbers as they are, anything else as a quoted string."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    text = str(value)
    if re.fullmatch(r"-?\d+(?:\.\d+)?", text):
        return text
    return "'" + text.replace("'", "''") + "'"


def lookup_sql(table: str, columns: Sequence[str], phrases: Sequence[str], *, limit: int = 25) -> str:
    """One statement listing ``(column, value)`` for every value of ``columns`` that contains one
    of ``phrases`` (case-insensitive on both backends)."""
    parts = []
    for column in columns:
        tests = " OR ".join(f"{quote(column)} LIKE {sql_literal('%' + p + '%')}" for p in phrases)
        parts.append(f"SELECT {sql_literal(column)}, {quote(column)} FROM {quote(table)} WHERE {tests}")
    return " UNION ".join(parts) + f" LIMIT {limit}"


@dataclass(frozen=True, slots=True)
class Sketch:
    """A query over one table, or two joined ``ON`` a key, part by part (expressions already
    written as SQL)."""

    table: str
    select: tuple[str, ...]
    join: str | None = None  # the second table
    on: str | None = None  # the join's key, as SQL
    distinct: bool = False
    where: tuple[str, ...] = ()
    either: bool = False  # the conditions are joined by OR
    group: str | None = None
    having: str | None = None
    order: str | None = None
    limit: int | None = None

    def sql(self) -> str:
        parts = [f"SELECT {'DISTINCT ' if self.distinct else ''}{', '.join(self.select)} FROM {quote(self.table)}"]
        if self.join is not None:
            parts.append(f"JOIN {quote(self.join)} ON {self.on}")
        if self.where:
            parts.append("WHERE " + (" OR " if self.either else " AND ").join(self.where))
        if self.group:
            parts.append(f"GROUP BY {self.group}")
        if self.having:
            parts.append(f"HAVING {self.having}")
        if self.order:
            parts.append(f"ORDER BY {self.order}")
        if self.limit is not None:
            parts.append(f"LIMIT {self.limit}")
        return " ".join(parts)
