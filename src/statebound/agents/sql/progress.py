"""What the scoped SQL machine has established so far, and the view of it its parts read.

:class:`Established` is the machine's flow variables (``Flow(vars=Established)``, see
:mod:`statebound.flow.variables`): the tables (``SHOW TABLES``), the chosen table and its columns
(``DESC``), the literal values found in it, the table joined to it with its columns, values and
key, the parts chosen since the table was chosen, whether the latest query found rows, and the
environment's actions. Each tool and each pick writes the fields it declares, and nothing is read
back from the history. :class:`Progress` is what the machine's conditions, candidates and prompts
read: the stored state as it is (never copied) with the question's
:class:`~statebound.agents.sql.reading.Reading`; :meth:`Progress.sketch` assembles the query, the
reading giving the shape and the choices the parts.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from statebound.agents.question_text import singular_forms
from statebound.agents.sql.joins import JoinKey, join_keys
from statebound.agents.sql.reading import Reading, read_question
from statebound.agents.sql.sketch import Column, Sketch, quote, sql_literal

__all__ = ["TABLE_START", "Established", "Progress", "conditions_for_literal", "stored_value"]

MAX_CONDITIONS = 8  # per literal: the model chooses among at most this many
Columns = tuple[Column, ...]
Found = tuple[tuple[str, str, Any], ...]  # (literal, column, value as stored)


@dataclass(frozen=True, slots=True)
class Established:
    """The machine's flow variables (module docstring); the parts are those chosen since the
    table was chosen, each in the order chosen."""

    tables: tuple[str, ...] = ()
    tried_tables: tuple[str, ...] = ()  # chosen before the current table
    table: str | None = None
    columns: Columns | None = None  # None until the table is described
    found: Found | None = None  # None: not looked up
    join: str | None = None  # the table chosen to join (a join is tried once per table)
    join_columns: Columns | None = None  # None until the joined table is described
    join_found: Found | None = None  # values found in the joined table
    key: str | None = None  # the chosen join key (JoinKey.text)
    described: dict[str, Columns] = field(default_factory=dict)  # every table described so far
    matches: tuple[str, ...] = ()  # conditions chosen for the question's values
    answers: tuple[str, ...] = ()  # answer columns
    groups: tuple[str, ...] = ()  # group columns (the latest counts)
    compares: tuple[str, ...] = ()  # conditions chosen for the question's numbers
    sorts: tuple[str, ...] = ()  # sort columns (the latest counts)
    no_rows: bool = False  # the latest query found no rows (or one row of NULLs), or failed
    actions: int = 0  # environment actions so far
    done: bool = False  # the environment ended the episode

    def start_table(self, table: str) -> dict[str, Any]:
        """The fields choosing ``table`` changes: everything found of the table before, and the
        parts chosen for it, start over (:data:`TABLE_START`)."""
        tried = self.tried_tables if self.table is None else (*self.tried_tables, self.table)
        return {"table": table, "tried_tables": tried, "columns": None, "found": None, "join": None,
                "join_columns": None, "join_found": None, "key": None, "matches": (), "answers": (), "groups": (),
                "compares": (), "sorts": ()}


TABLE_START = tuple(Established().start_table("").keys())  # what the table pick writes


def stored_value(value: Any) -> Any:
    """A value as stored in the flow variables (a blob as text: the variables are JSON)."""
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value


@functools.lru_cache(maxsize=256)
def _reading(question: str, tables: tuple[str, ...]) -> Reading:
    return read_question(question, tables=tables)


@dataclass(frozen=True, slots=True)
class Progress:
    """What the run has established (``vars``, as stored) read for ``question`` (module docstring)."""

    vars: Established
    question: str
    reading: Reading

    @classmethod
    def of(cls, now: Established, question: str) -> Progress:
        """The view of ``now`` for ``question`` (its reading is cached by question and tables)."""
        return cls(now, question, _reading(question, now.tables))

    # -- the join --------------------------------------------------------------------------
    def keys(self) -> list[JoinKey]:
        """The keys that may link the table to the joined one (none before it is described)."""
        now = self.vars
        if now.table is None or now.join is None or now.columns is None or now.join_columns is None:
            return []
        return join_keys(now.table, now.columns, now.join, now.join_columns)

    @property
    def joined(self) -> bool:
        """The query joins a second table: a key was chosen (among :meth:`keys`, which cannot
        change until another table is chosen, and that clears the key)."""
        return self.vars.key is not None

    def column_texts(self) -> list[tuple[str, Column]]:
        """The columns in scope as the chooser sees them: bare names, or ``table.column`` once
        a second table is joined."""
        now = self.vars
        if not self.joined:
            return [(c.name, c) for c in now.columns or ()]
        return [(f"{table}.{c.name}", c) for table, columns in ((now.table, now.columns), (now.join, now.join_columns))
                for c in columns or ()]

    def _split(self, text: str) -> tuple[str | None, str]:
        """A column's text (:meth:`column_texts`) as (its table once joined, else None; its name)."""
        for table in (self.vars.table, self.vars.join) if self.joined else ():
            if table is not None and text.startswith(table + "."):
                return table, text[len(table) + 1:]
        return None, text

    def ref(self, text: str) -> str:
        """A column's text (:meth:`column_texts`) as SQL."""
        table, name = self._split(text)
        return quote(name) if table is None else f"{quote(table)}.{quote(name)}"

    def _column_text(self, table: str, column: str) -> str:
        return f"{table}.{column}" if self.joined else column

    def all_found(self) -> list[tuple[str, str, Any]]:
        """(literal, column text, value) found in the table and, once joined, in the joined one."""
        now = self.vars
        rows = [(lit, self._column_text(now.table or "", column), value) for lit, column, value in now.found or ()]
        if self.joined:
            rows += [(lit, f"{now.join}.{column}", value) for lit, column, value in now.join_found or ()]
        return rows

    @property
    def missing(self) -> tuple[str, ...]:
        """The question's values the table does not hold (after its look-up)."""
        found = {literal for literal, _, _ in self.vars.found or ()}
        return tuple(v for v in self.values if v not in found) if self.vars.found is not None else ()

    # -- what the shape needs --------------------------------------------------------------
    @property
    def grouped(self) -> bool:
        reading = self.reading
        return reading.group or reading.by_count or reading.having is not None

    @property
    def answers_needed(self) -> int:
        """How many answer columns to choose (0: the answer is count(*) or the group column)."""
        reading = self.reading
        if reading.by_count or reading.having is not None:
            return 0
        if reading.group:
            return 1 if reading.aggregates else 0
        if reading.count:
            return 1 if reading.distinct else 0
        if len(reading.aggregates) > 1:
            return 1
        return max(1, min(reading.asked, len(self.vars.columns or ())))

    @property
    def values(self) -> tuple[str, ...]:
        """The question's literals that may be values: those not naming a table or column of the
        schema seen so far ("TV" for tv_series, "Airport" for AirportName)."""
        now = self.vars
        names = {form for name in (*now.tables, *(c.name for c in (*(now.columns or ()), *(now.join_columns or ()))))
                 for word in re.split(r"[_\s]+", name.lower()) if word for form in singular_forms(word)}
        return tuple(v for v in self.reading.literals if not all(singular_forms(w) & names for w in v.split()))

    @property
    def literals(self) -> tuple[str, ...]:
        """The values found in the table, in the question's order."""
        found = {literal for literal, _, _ in self.all_found()}
        return tuple(literal for literal in self.values if literal in found)

    def literal_conditions(self) -> dict[str, str]:
        """The condition chosen for each literal (the latest choice for it)."""
        chosen: dict[str, str] = {}
        for text in self.vars.matches:
            for literal in self.literals:
                if text in conditions_for_literal(self, literal):
                    chosen[literal] = text
        return chosen

    def number_conditions(self) -> dict[int, str]:
        chosen: dict[int, str] = {}
        for text in self.vars.compares:
            for index, comparison in enumerate(self.reading.numbers):
                if text.endswith(f" {comparison.op} {comparison.value}"):
                    chosen[index] = text
        return chosen

    def _in_question_order(self, columns: Sequence[str]) -> list[str]:
        """Answer columns in the order the question names them (those it does not name last)."""
        return sorted(columns, key=lambda c: _mentioned_at(self.question, self._bare(c)))

    def _bare(self, text: str) -> str:
        """A column's name without its table."""
        return self._split(text)[1]

    # -- the query ---------------------------------------------------------------------------
    def sketch(self) -> Sketch:
        """The query from the choices made so far (the parts not chosen yet are left out)."""
        reading = self.reading
        now, table = self.vars, self.vars.table
        assert table is not None, "a table is chosen before a query is built"
        answers = [self.ref(a) for a in self._in_question_order(now.answers)]
        group = self.ref(now.groups[-1]) if now.groups else None
        select: list[str]
        order, having, limit = None, None, reading.limit
        if self.grouped and group is not None:
            if reading.by_count:
                select, order = [group], f"count(*) {reading.superlative or 'DESC'}"
            elif reading.having is not None:
                select, having = [group], f"count(*) {reading.having.op} {reading.having.value}"
                limit = None
            else:
                measure = f"{reading.aggregates[0]}({answers[0]})" if reading.aggregates and answers else "count(*)"
                group_first = _mentioned_at(self.question, self._bare(now.groups[-1])) < reading.measure_at
                select = [group, measure] if group_first else [measure, group]
                limit = None
        elif reading.count:
            select = [f"count(DISTINCT {answers[0]})"] if reading.distinct and answers else ["count(*)"]
            limit = None
        elif reading.aggregates and answers:
            if len(reading.aggregates) > 1:
                select = [f"{aggregate}({answers[0]})" for aggregate in reading.aggregates]
            else:
                select = [f"{reading.aggregates[0]}({a})" for a in answers]
            limit = None
        else:
            select = answers or ["*"]
        if now.sorts:
            direction = reading.sort or reading.superlative or "ASC"
            order = f"{self.ref(now.sorts[-1])} {direction}"
        elif order is None:
            limit = None
        where = [*self.literal_conditions().values(), *self.number_conditions().values()]
        distinct = reading.distinct and not (reading.count or self.grouped or reading.aggregates)
        key = next((k for k in self.keys() if k.text(table, now.join or "") == now.key), None)
        join, on = (now.join, key.sql(table, now.join)) if key is not None and now.join else (None, None)
        return Sketch(table, tuple(select), join=join, on=on, distinct=distinct, where=tuple(where),
                      either=reading.either, group=group if self.grouped else None, having=having,
                      order=order, limit=limit)


def _mentioned_at(question: str, column: str) -> int:
    """Where the question first names a column (its words, or their stems), else past the end."""
    text = question.lower()
    words = [w for w in re.split(r"[_\s]+", column.lower()) if w]
    spots = [text.find(w[:max(3, len(w) - 2)]) for w in words]
    found = [s for s in spots if s >= 0]
    return min(found) if found else len(text) + 1


def conditions_for_literal(progress: Progress, literal: str) -> list[str]:
    """The conditions a literal may stand for: one per column it was found in, with the value as
    stored (an exact match, ignoring case, wins over values that only contain it), or a LIKE
    when the question asks for a substring. ``!=`` when the question negates."""
    rows = [(column, value) for lit, column, value in progress.all_found() if lit == literal]
    operator = "!=" if progress.reading.negated else "="
    conditions: list[str] = []
    for column in dict.fromkeys(column for column, _ in rows):
        values = [value for c, value in rows if c == column]
        exact = [v for v in values if str(v).strip().lower() == literal.lower()]
        if progress.reading.substring and not exact:
            conditions.append(f"{progress.ref(column)} LIKE {sql_literal('%' + literal + '%')}")
            continue
        for value in (exact[:1] or values):
            conditions.append(f"{progress.ref(column)} {operator} {sql_literal(value)}")
    return conditions[:MAX_CONDITIONS]

