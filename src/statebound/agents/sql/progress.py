"""What the scoped SQL machine has established so far: the run's typed state.

:class:`Established` is the machine's flow variables (``Flow(vars=Established)``, see
:mod:`statebound.flow.variables`): the tables (``SHOW TABLES``), the chosen table and its columns
(``DESC``), the literal values found in it, the table joined to it with its columns, values and
key, the choices made since the table was chosen, the queries run, and whether the environment
ended the episode. The machine's tools and picks write it as they run (:func:`after_action`,
:func:`after_pick`); it is checkpointed with the run and never re-read from the history.
:class:`Progress` is the view the machine's conditions, candidates and prompts read: the
established facts with the question's :class:`~statebound.agents.sql.reading.Reading`;
:meth:`Progress.sketch` assembles the query from them, the reading giving the shape and the
choices the parts.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from statebound.agents.question_text import singular_forms
from statebound.agents.sql.joins import JoinKey, join_keys
from statebound.agents.sql.reading import Reading, read_question
from statebound.agents.sql.sketch import Column, Sketch, quote, sql_literal
from statebound.flow import Picked

__all__ = ["Established", "Progress", "after_action", "after_pick", "conditions_for_literal"]

MAX_CONDITIONS = 8  # per literal: the model chooses among at most this many
Columns = tuple[tuple[str, str], ...]  # (name, type) as DESC shows them
Found = tuple[tuple[str, str, Any], ...]  # (literal, column, value as stored)


@dataclass(frozen=True, slots=True)
class Established:
    """The machine's flow variables (module docstring); choices are those since the table was chosen."""

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
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)  # choice name -> texts chosen, in order
    runs: tuple[dict[str, Any], ...] = ()  # queries run for the current table
    actions: int = 0  # environment actions so far
    choices_since_run: int = 0
    done: bool = False  # the environment ended the episode


def after_action(now: Established, data: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a tool's result changes (``data``: the ``part`` it established, and ``action``
    and ``done`` when it sent an action to the environment)."""
    changes: dict[str, Any] = {}
    if "action" in data:
        changes.update(actions=now.actions + 1, done=bool(data.get("done")))
    part = data.get("part")
    if part == "tables":
        changes["tables"] = tuple(data["tables"])
    elif part == "columns":
        columns = tuple((str(name), str(kind)) for name, kind in data["columns"])
        joined = now.join is not None and now.columns is not None
        changes["join_columns" if joined else "columns"] = columns
        changes["described"] = {**now.described, ((now.join if joined else now.table) or ""): columns}
    elif part == "lookup":
        found = tuple((literal, column, _json_value(value)) for literal, column, value in data["found"])
        changes["join_found" if now.join is not None and now.found is not None else "found"] = found
    elif part == "run":
        changes.update(runs=(*now.runs, dict(data)), choices_since_run=0)
    return changes


def _json_value(value: Any) -> Any:
    """A value as stored in the flow variables (a blob as text: the variables are JSON)."""
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value


def after_pick(now: Established, picked: Picked) -> dict[str, Any]:
    """The fields a choice changes: another table starts over; a join table, a key, or one more
    part of the query."""
    if picked.text is None:  # nothing to choose from: nothing chosen
        return {}
    counted = {"choices_since_run": now.choices_since_run + 1}
    if picked.name == "table":
        return {**counted, "table": picked.text, "columns": None, "found": None, "join": None,
                "join_columns": None, "join_found": None, "key": None, "choices": {}, "runs": (),
                "tried_tables": now.tried_tables if now.table is None else (*now.tried_tables, now.table)}
    if picked.name in ("join", "key"):
        return {**counted, picked.name: picked.text}
    return {**counted, "choices": {**now.choices, picked.name: (*now.choices.get(picked.name, ()), picked.text)}}


@functools.lru_cache(maxsize=256)
def _reading(question: str, tables: tuple[str, ...]) -> Reading:
    return read_question(question, tables=tables)


@dataclass(slots=True)
class Progress:
    """The run so far (see the module docstring); choices are those since the table was chosen."""

    question: str
    reading: Reading = field(default_factory=Reading)
    tables: tuple[str, ...] = ()
    tried_tables: tuple[str, ...] = ()  # chosen before the current table
    table: str | None = None
    columns: tuple[Column, ...] | None = None  # None until the table is described
    found: tuple[tuple[str, str, Any], ...] | None = None  # (literal, column, value); None: not looked up
    join: str | None = None  # the table chosen to join (a join is tried once per table)
    join_columns: tuple[Column, ...] | None = None  # None until the joined table is described
    join_found: tuple[tuple[str, str, Any], ...] | None = None  # values found in the joined table
    key: str | None = None  # the chosen join key (JoinKey.text)
    described: dict[str, tuple[Column, ...]] = field(default_factory=dict)  # every table described so far
    choices: dict[str, list[str]] = field(default_factory=dict)  # choice name -> texts chosen, in order
    runs: list[dict[str, Any]] = field(default_factory=list)  # queries run for the current table
    actions: int = 0  # environment actions so far
    choices_since_run: int = 0

    @classmethod
    def of(cls, now: Established, question: str) -> Progress:
        """The view of what is established, for ``question``."""
        def columns(pairs: Columns | None) -> tuple[Column, ...] | None:
            return None if pairs is None else tuple(Column(name, kind) for name, kind in pairs)

        return cls(question=question, reading=_reading(question, now.tables),
                   tables=now.tables, tried_tables=now.tried_tables, table=now.table, columns=columns(now.columns),
                   found=now.found, join=now.join, join_columns=columns(now.join_columns), join_found=now.join_found,
                   key=now.key, described={t: columns(c) or () for t, c in now.described.items()},
                   choices={name: list(texts) for name, texts in now.choices.items()}, runs=list(now.runs),
                   actions=now.actions, choices_since_run=now.choices_since_run)

    def chosen(self, name: str) -> list[str]:
        return self.choices.get(name, [])

    # -- the join --------------------------------------------------------------------------
    def keys(self) -> list[JoinKey]:
        """The keys that may link the table to the joined one (none before it is described)."""
        if self.table is None or self.join is None or self.columns is None or self.join_columns is None:
            return []
        return join_keys(self.table, self.columns, self.join, self.join_columns)

    @property
    def joined(self) -> bool:
        """The query joins a second table: a key was chosen (among :meth:`keys`, which cannot
        change until another table is chosen, and that clears the key)."""
        return self.key is not None

    def column_texts(self) -> list[tuple[str, Column]]:
        """The columns in scope as the chooser sees them: bare names, or ``table.column`` once
        a second table is joined."""
        if not self.joined:
            return [(c.name, c) for c in self.columns or ()]
        return [(f"{table}.{c.name}", c) for table, columns in ((self.table, self.columns), (self.join, self.join_columns))
                for c in columns or ()]

    def _split(self, text: str) -> tuple[str | None, str]:
        """A column's text (:meth:`column_texts`) as (its table once joined, else None; its name)."""
        for table in (self.table, self.join) if self.joined else ():
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
        rows = [(lit, self._column_text(self.table or "", column), value) for lit, column, value in self.found or ()]
        if self.joined:
            rows += [(lit, f"{self.join}.{column}", value) for lit, column, value in self.join_found or ()]
        return rows

    @property
    def missing(self) -> tuple[str, ...]:
        """The question's values the table does not hold (after its look-up)."""
        found = {literal for literal, _, _ in self.found or ()}
        return tuple(v for v in self.values if v not in found) if self.found is not None else ()

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
        return max(1, min(reading.asked, len(self.columns or ())))

    @property
    def values(self) -> tuple[str, ...]:
        """The question's literals that may be values: those not naming a table or column of the
        schema seen so far ("TV" for tv_series, "Airport" for AirportName)."""
        names = {form for name in (*self.tables, *(c.name for c in (*(self.columns or ()), *(self.join_columns or ()))))
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
        for text in self.chosen("match"):
            for literal in self.literals:
                if text in conditions_for_literal(self, literal):
                    chosen[literal] = text
        return chosen

    def number_conditions(self) -> dict[int, str]:
        chosen: dict[int, str] = {}
        for text in self.chosen("compare"):
            for index, comparison in enumerate(self.reading.numbers):
                if text.endswith(f" {comparison.op} {comparison.value}"):
                    chosen[index] = text
        return chosen

    def _in_question_order(self, columns: list[str]) -> list[str]:
        """Answer columns in the order the question names them (those it does not name last)."""
        return sorted(columns, key=lambda c: _mentioned_at(self.question, self._bare(c)))

    def _bare(self, text: str) -> str:
        """A column's name without its table."""
        return self._split(text)[1]

    # -- the query ---------------------------------------------------------------------------
    def sketch(self) -> Sketch:
        """The query from the choices made so far (the parts not chosen yet are left out)."""
        reading = self.reading
        assert self.table is not None, "a table is chosen before a query is built"
        answers = [self.ref(a) for a in self._in_question_order(self.chosen("answer"))]
        group = self.ref(self.chosen("group")[-1]) if self.chosen("group") else None
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
                group_first = _mentioned_at(self.question, self._bare(self.chosen("group")[-1])) < reading.measure_at
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
        if self.chosen("sort"):
            direction = reading.sort or reading.superlative or "ASC"
            order = f"{self.ref(self.chosen('sort')[-1])} {direction}"
        elif order is None:
            limit = None
        where = [*self.literal_conditions().values(), *self.number_conditions().values()]
        distinct = reading.distinct and not (reading.count or self.grouped or reading.aggregates)
        key = next((k for k in self.keys() if k.text(self.table, self.join or "") == self.key), None)
        join, on = (self.join, key.sql(self.table, self.join)) if key is not None and self.join else (None, None)
        return Sketch(self.table, tuple(select), join=join, on=on, distinct=distinct, where=tuple(where),
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

