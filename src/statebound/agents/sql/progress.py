"""What the scoped SQL machine has established so far, read back from the run's history.

Every fact lives in the history, where the machine's tools and choices put it: the tables
(``SHOW TABLES``), the chosen table and its columns (``DESC``), the literal values found in it,
the table joined to it with its columns, values and key, the choices made since the table was
chosen, and the queries run. :func:`progress_of` folds the history into a :class:`Progress`;
:meth:`Progress.sketch` assembles the query from it, the question's
:class:`~statebound.agents.sql.reading.Reading` giving the shape and the choices the parts.
Nothing is kept outside the history, so a run's state is always what its history says.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from statebound.agents.sql.joins import JoinKey, join_keys
from statebound.agents.sql.reading import Reading, read_question
from statebound.agents.sql.sketch import Column, Sketch, quote, sql_literal
from statebound.flow import Entry, Picked

__all__ = ["Progress", "conditions_for_literal", "progress_of"]

MAX_CONDITIONS = 8  # per literal: the model chooses among at most this many


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
        names = {stem for name in (*self.tables, *(c.name for c in (*(self.columns or ()), *(self.join_columns or ()))))
                 for word in re.split(r"[_\s]+", name.lower()) if word for stem in (word, word.rstrip("s"))}
        return tuple(v for v in self.reading.literals
                     if not all(w.lower().rstrip("s") in names for w in v.split()))

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


def _tool_data(entry: Entry) -> dict[str, Any]:
    return entry.data if entry.source == "tool" and isinstance(entry.data, dict) else {}


def progress_of(history: Sequence[Entry], question: str) -> Progress:
    """Fold the history into a :class:`Progress` (module docstring)."""
    progress = Progress(question=question)
    for entry in history:
        data = _tool_data(entry)
        if "action" in data:
            progress.actions += 1
        part = data.get("part")
        if part == "tables":
            progress.tables = tuple(data["tables"])
            progress.reading = read_question(question, tables=progress.tables)
        elif part == "columns":
            columns = tuple(Column(name, kind) for name, kind in data["columns"])
            if progress.join is not None and progress.columns is not None:
                progress.join_columns = columns
                progress.described[progress.join] = columns
            else:
                progress.columns = columns
                progress.described[progress.table or ""] = columns
        elif part == "lookup":
            found = tuple((literal, column, value) for literal, column, value in data["found"])
            if progress.join is not None and progress.found is not None:
                progress.join_found = found
            else:
                progress.found = found
        elif part == "run":
            progress.runs.append(data)
            progress.choices_since_run = 0
        picked = Picked.from_entry(entry) if entry.source == "llm" else None
        if picked is None or picked.text is None:
            continue
        if picked.name == "table":
            if progress.table is not None:
                progress.tried_tables = (*progress.tried_tables, progress.table)
            progress.table, progress.columns, progress.found = picked.text, None, None
            progress.join, progress.join_columns, progress.join_found, progress.key = None, None, None, None
            progress.choices, progress.runs = {}, []
        elif picked.name == "join":
            progress.join = picked.text
        elif picked.name == "key":
            progress.key = picked.text
        else:
            progress.choices.setdefault(picked.name, []).append(picked.text)
        progress.choices_since_run += 1
    return progress
