"""``stateflow-scoped``: an InterCode-SQL machine that builds the query a part at a time, each part
chosen by the model from candidates the database supplies (our extension; agent
``stateflow-scoped``, and ``stateflow-scoped-random`` with seeded random choices, the control).

The question's words give the query's shape (:mod:`statebound.agents.sql.reading`: a count, an
aggregate, grouped, sorted, limited, which literals and numbers it filters by); the model chooses
the schema items, one :class:`~statebound.flow.Pick` at a time:

- ``Init`` runs ``SHOW TABLES``; ``Table`` picks the table; ``Describe`` runs ``DESC`` on it;
- ``Lookup`` (when the question names values) finds in one statement which text columns hold them;
- ``Join`` picks a second table when the first lacks something the question asks for: a value it
  names (not found in the table), or a table its answer, group, order or counted words name
  while no column of the first does. ``Describe`` runs ``DESC`` on it, ``Key`` picks the columns that link
  the two (:mod:`statebound.agents.sql.joins`: foreign-key-like names), and ``Lookup`` finds the
  missing values in it; from then on every column is offered as ``table.column`` from both;
- ``Match`` picks, for each value found, the condition it stands for (``city = 'Aberdeen'``);
- ``Answer`` picks the column(s) the question asks for (numeric ones under an aggregate);
  ``Group`` the column to group by; ``Compare`` the column each number is compared with;
  ``Sort`` the column to order by;
- ``Run`` executes the query. Rows end the episode (``Submit``). No rows (or one row of NULLs) or
  an error go back to the part most likely wrong: another condition for a value (``Match``), another
  column for a number (``Compare``), then another table (``Table``), while the environment's
  actions last.

The run's state is typed (:class:`~statebound.agents.sql.progress.Established`, the flow
variables), and every state declares what it writes: each tool returns the fields it establishes
(``ToolResult(update=...)``), each pick writes its own (``Pick(into=)``, or ``update=`` appending
the part chosen). The conditions, candidates and prompts read a view of it
(:class:`~statebound.agents.sql.progress.Progress`). The query's parts are one
:func:`~statebound.flow.first_due` pipeline: the first part due is next, else ``Run``; each part's
state enters it at its own part or further on.

Each pick scores its candidates after a short prompt and calibrates by the same prompt without
the question (``Pick(baseline=...)``): picking the gold table this way is right for 65 % of easy
and medium questions against 29 % by chance (see ``docs/intercode-sql.md``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from statebound.agents.budget import actions_allowed, transitions_for
from statebound.agents.question_text import singular_forms
from statebound.agents.sql.progress import (
    TABLE_START,
    Established,
    Progress,
    conditions_for_literal,
    stored_value,
)
from statebound.agents.sql.sketch import columns_of, lookup_sql, parse_rows, quote
from statebound.agents.sql.tools import act
from statebound.flow import (
    CallTool,
    ChoiceMethod,
    FirstDue,
    Flow,
    Pick,
    Rule,
    RunContext,
    State,
    ToolResult,
    always,
    first_due,
)
from statebound.llm.base import Message

__all__ = ["DESCRIBE", "LOOK_UP", "RUN", "SHOW_TABLES", "SUBMIT", "SYSTEM", "build_scoped", "progress"]

SYSTEM = "You are an expert on SQL databases. Answer with one item only."
# how much of the baseline each choice subtracts (Pick.baseline_weight; 1 unless named): measured
# on development tasks (docs/intercode-sql.md), the answer column is right more often with 0.75,
# as the full difference overrides the model where the question names the column plainly ("the name")
CALIBRATION: dict[str, float] = {"answer": 0.75}
MAX_TABLES = 2  # tables tried before giving up on finding a better one


def progress(ctx: RunContext[Established]) -> Progress:
    """What the run has established so far (:mod:`statebound.agents.sql.progress`)."""
    return Progress.of(ctx.vars, ctx.task)


# -- tools: the environment's side; each returns the fields it establishes --------------------
ACTED = ("actions", "done")  # what every tool that acts writes


def _acted(ctx: RunContext[Established], result: ToolResult, update: Mapping[str, Any], **data: Any) -> ToolResult:
    """``result`` of an action sent to the environment, with the fields it establishes
    (``update``) and the counters every action changes (:data:`ACTED`)."""
    counted = {"actions": ctx.vars.actions + 1, "done": bool(result.data["done"])}
    return ToolResult(result.output, ok=result.ok, data={**result.data, **data}, update={**counted, **update})


def show_tables(ctx: RunContext[Established]) -> ToolResult:
    result = act(ctx, "execute[SHOW TABLES]")
    tables = [str(row[0]) for row in parse_rows(result.output) or [] if row]
    return _acted(ctx, result, {"tables": tuple(tables)}, tables=tables)


def describe(ctx: RunContext[Established]) -> ToolResult:
    """DESC the chosen table, or the joined one once the first is described."""
    now = ctx.vars
    joining = now.join is not None and now.columns is not None
    table, into = (now.join or "", "join_columns") if joining else (now.table or "", "columns")
    if table in now.described:  # a table joined without a key, chosen next: no second DESC
        columns = now.described[table]
        return ToolResult(f"Columns of {table}: {', '.join(c.name for c in columns)}",
                          data={"columns": [[c.name, c.type] for c in columns]}, update={into: columns})
    result = act(ctx, f"execute[DESC {quote(table)}]")
    columns = columns_of(parse_rows(result.output) or [])
    return _acted(ctx, result, {into: columns, "described": {**now.described, table: columns}},
                  columns=[[c.name, c.type] for c in columns])


def look_up(ctx: RunContext[Established]) -> ToolResult:
    """Which text columns hold the question's values: in the chosen table, or (once joined) the
    values it lacks in the joined table."""
    now = progress(ctx)
    in_join = now.joined and now.vars.found is not None
    table, columns = (now.vars.join, now.vars.join_columns) if in_join else (now.vars.table, now.vars.columns)
    into = "join_found" if in_join else "found"
    text_columns = [c.name for c in columns or () if not c.numeric]
    literals = now.missing if in_join else now.values
    if not text_columns:
        return ToolResult("no text columns to look in", data={"found": []}, update={into: ()})
    phrases = list(dict.fromkeys(p for literal in literals for p in _phrases(literal)))
    result = act(ctx, f"execute[{lookup_sql(table or '', text_columns, phrases)}]")
    found = []
    for column, value in ((str(r[0]), r[1]) for r in parse_rows(result.output) or [] if len(r) == 2):
        for literal in literals:
            if any(p.lower() in str(value).lower() for p in _phrases(literal)):
                found.append([literal, column, value])
    stored = tuple((literal, column, stored_value(value)) for literal, column, value in found)
    return _acted(ctx, result, {into: stored}, found=found)


def _phrases(literal: str) -> list[str]:
    """What to search for a literal: itself, and a demonym's place ("Asian" -> "Asia")."""
    if len(literal) > 4 and literal.endswith("an"):
        return [literal, literal[:-1]]
    return [literal]


def run_query(ctx: RunContext[Established]) -> ToolResult:
    sql = progress(ctx).sketch().sql()
    result = act(ctx, f"execute[{sql}]")
    rows = parse_rows(result.output)
    empty = not rows or (len(rows) == 1 and all(value is None for value in rows[0]))
    return _acted(ctx, result, {"no_rows": empty}, query=sql, empty=empty)


def submit(ctx: RunContext[Established]) -> ToolResult:
    return _acted(ctx, act(ctx, "submit"), {})


# the tools as the states call them, each with the fields it writes
SHOW_TABLES = CallTool(show_tables, name="sql", writes=("tables", *ACTED))
DESCRIBE = CallTool(describe, name="sql", writes=("columns", "join_columns", "described", *ACTED))
LOOK_UP = CallTool(look_up, name="sql", writes=("found", "join_found", *ACTED))
RUN = CallTool(run_query, name="sql", writes=("no_rows", *ACTED))
SUBMIT = CallTool(submit, name="sql", writes=ACTED)


# -- picks: what each choice writes ------------------------------------------------------------
def start_table(ctx: RunContext[Established], table: str | None) -> dict[str, Any]:
    """The table pick: another table starts over (nothing chosen: nothing changes)."""
    return {} if table is None else ctx.vars.start_table(table)


def appending(field: str) -> dict[str, Any]:
    """What a part's pick declares (``Pick(update=, writes=)``): its text is appended to
    ``field`` (nothing chosen: nothing changes)."""
    def append(ctx: RunContext[Established], text: str | None) -> dict[str, Any]:
        return {} if text is None else {field: (*getattr(ctx.vars, field), text)}

    return {"update": append, "writes": (field,)}


# -- candidates: what each choice is among ----------------------------------------------------
def named(names: list[str], words: str) -> list[str]:
    """The names that ``words`` spell out (each word of the name, singular or plural, in
    ``words``): "templates" names ``templates``, "the names" names ``Name``, "tv series" ``tv_series``."""
    said = {form for w in re.findall(r"[A-Za-z0-9]+", words) for form in singular_forms(w)}
    return [n for n in names if all(part.lower() in said for part in re.split(r"[_\s]+", n) if part)]


def tier(names: list[str], words: str, *, named_first: bool) -> list[str]:
    """With ``named_first``, the names ``words`` spell out when there are any (offered alone);
    else (and when there are none) all the names."""
    return (named(names, words) if named_first else []) or names


def table_candidates(ctx: RunContext, *, named_first: bool = False) -> list[str]:
    now = progress(ctx)
    tables, tried = now.vars.tables, now.vars.tried_tables
    left = [t for t in tables if t not in tried and t != now.vars.table] or list(tables)
    return tier(left, now.question, named_first=named_first)


def answer_candidates(ctx: RunContext, *, named_first: bool = False) -> list[str]:
    """The columns not chosen yet, but those a value's condition uses (the question names their
    value, so it hardly asks for them); measurable ones under an aggregate, ids aside."""
    now = progress(ctx)
    columns = now.column_texts()
    if now.reading.aggregates:
        columns = [(t, c) for t, c in columns if c.comparable and not _is_id(c.name)] or columns
    used = set(now.vars.answers) | {_column_of(c) for c in now.literal_conditions().values()}
    return tier([t for t, _ in columns if t not in used] or [t for t, _ in columns],
                now.reading.answer_words, named_first=named_first)


def _is_id(name: str) -> bool:
    return bool(re.search(r"(?:^|_)id$", name, re.IGNORECASE))


def _column_of(condition: str) -> str:
    """The column text (``name`` or ``table.name``) a condition tests."""
    match = re.match(r"`((?:[^`]|``)*)`(?:\.`((?:[^`]|``)*)`)?", condition)
    if match is None:
        return condition
    return ".".join(part.replace("``", "`") for part in match.groups() if part is not None)


def group_candidates(ctx: RunContext, *, named_first: bool = False) -> list[str]:
    now = progress(ctx)
    return tier([t for t, _ in now.column_texts() if t not in now.vars.answers], _group_words(now),
                named_first=named_first)


def sort_candidates(ctx: RunContext, *, named_first: bool = False) -> list[str]:
    now = progress(ctx)
    columns = now.column_texts()
    if now.reading.superlative and not now.reading.sort:
        columns = [(t, c) for t, c in columns if c.comparable] or columns
    return tier([t for t, _ in columns], now.reading.sort_words, named_first=named_first)


def match_candidates(ctx: RunContext) -> list[str]:
    now = progress(ctx)
    literal = _pending_literal(now)
    if literal is None:
        return []
    tried = set(now.vars.matches)
    return [c for c in conditions_for_literal(now, literal) if c not in tried]


def compare_candidates(ctx: RunContext) -> list[str]:
    now = progress(ctx)
    index = _pending_number(now)
    if index is None:
        return []
    comparison = now.reading.numbers[index]
    tried = set(now.vars.compares)
    columns = [(t, c) for t, c in now.column_texts() if c.comparable] or now.column_texts()
    return [text for t, _ in columns if (text := f"{now.ref(t)} {comparison.op} {comparison.value}") not in tried]


def join_candidates(ctx: RunContext) -> list[str]:
    """The tables the question's words name (when they name one), else every other table."""
    now = progress(ctx)
    others = [t for t in now.vars.tables if t != now.vars.table and t not in now.vars.tried_tables]
    return _tables_named_elsewhere(now) or others


def key_candidates(ctx: RunContext) -> list[str]:
    now = progress(ctx)
    return [key.text(now.vars.table or "", now.vars.join or "") for key in now.keys()]


def _tables_named_elsewhere(now: Progress) -> list[str]:
    """Other tables named by the words of the answer, the group, the order or what is counted,
    where those words name no column of the chosen table ("for each stadium" asked of
    ``concert``, "how many concerts" of ``stadium``)."""
    columns = [c.name for c in now.vars.columns or ()]
    others = [t for t in now.vars.tables if t != now.vars.table]
    found: list[str] = []
    for words in (now.reading.answer_words, _group_words(now), now.reading.sort_words, now.reading.counted_words):
        if words and not named(columns, words):
            found += named(others, words)
    return list(dict.fromkeys(found))


def _pending_literal(now: Progress) -> str | None:
    """The literal to choose a condition for: the first without one, else (after a failed query)
    the last that still has conditions not tried."""
    chosen = now.literal_conditions()
    missing = [lit for lit in now.literals if lit not in chosen]
    if missing:
        return missing[0]
    tried = set(now.vars.matches)
    open_ = [lit for lit in now.literals if any(c not in tried for c in conditions_for_literal(now, lit))]
    return open_[-1] if open_ else None


def _pending_number(now: Progress) -> int | None:
    chosen = now.number_conditions()
    missing = [i for i in range(len(now.reading.numbers)) if i not in chosen]
    if missing:
        return missing[0]
    return len(now.reading.numbers) - 1 if now.reading.numbers else None


# -- transitions: small named conditions on what is established ------------------------------
def _may_try_another_table(now: Progress, *, max_actions: int) -> bool:
    """Another table may be chosen: one is left, fewer than MAX_TABLES were tried, and the
    environment's actions suffice to describe it and run a query."""
    tried, actions, tables = now.vars.tried_tables, now.vars.actions, now.vars.tables
    return len(tried) + 1 < MAX_TABLES and actions + 3 < max_actions and len(tables) > 1


def _wants_join(now: Progress, *, max_actions: int) -> bool:
    """No table joined yet, the chosen one lacks a value or a named table, and the environment's
    actions suffice to describe another table, look in it, run and submit."""
    return (now.vars.join is None and bool(now.missing or _tables_named_elsewhere(now))
            and len(now.vars.tables) > 1 and now.vars.actions + 4 < max_actions)


# What the views of Progress read of the stored variables (its conditions read through them, so
# their reads are declared: the bytecode of a lambda over ``now`` shows none).
SCHEMA = ("tables", "columns", "join_columns")  # the question's values (Progress.values) are read against them
JOINED = ("table", "join", "key", *SCHEMA)  # the columns in scope (Progress.column_texts)
FOUND = ("found", "join_found", *JOINED)  # the values found (Progress.literals)


def _when(label: str, test: Callable[[Progress], bool], reads: tuple[str, ...]) -> Rule:
    """A transition's condition on what is established (``label`` names it on the diagram), and
    the variables it reads through ``Progress``."""
    return Rule(lambda ctx: test(progress(ctx)), label, reads=reads)


EPISODE_OVER = Rule(lambda ctx: ctx.vars.done, "episode over")
VALUES_TO_LOOK_UP = _when("values to look up", lambda now: bool(now.values) and now.vars.found is None,
                          ("found", *SCHEMA))
KEY_TO_CHOOSE = _when("key to choose",
                      lambda now: now.vars.join is not None and now.vars.key is None and bool(now.keys()), JOINED)
VALUES_IN_JOIN = _when("values to look up in the joined table",
                       lambda now: now.joined and bool(now.missing) and now.vars.join_found is None, FOUND)
MATCH_DUE = _when("a value without a condition",
                  lambda now: any(lit not in now.literal_conditions() for lit in now.literals), ("matches", *FOUND))
GROUP_DUE = _when("group to choose", lambda now: now.grouped and not now.vars.groups, ("groups", "tables"))
COMPARE_DUE = _when("a number without a condition",
                    lambda now: len(now.number_conditions()) < len(now.reading.numbers), ("compares", "tables"))
SORT_DUE = _when("order to choose", lambda now: bool(now.reading.sort or (now.reading.superlative and not now.reading.by_count))
                 and not now.vars.sorts, ("sorts", "tables"))


def _answer_due(named_first: bool) -> Rule:
    def due(ctx: RunContext[Established]) -> bool:
        now = progress(ctx)
        return len(now.vars.answers) < now.answers_needed and bool(answer_candidates(ctx, named_first=named_first))

    return Rule(due, "answer column to choose", reads=("answers", "matches", *FOUND))


def _query_parts(answer_due: Rule) -> FirstDue:
    """The parts of the query after the tables, in order: the first one due is next, else Run."""
    return first_due([("Match", MATCH_DUE), ("Answer", answer_due), ("Group", GROUP_DUE), ("Compare", COMPARE_DUE),
                      ("Sort", SORT_DUE)], otherwise="Run", name="query part")


def _revisions(max_actions: int) -> list[tuple[Rule, str]]:
    """After a query: rows end the episode; no rows, NULLs only or an error revise the part most
    likely wrong (another condition for a value, another column for a number, another table)."""
    def rows_or_out_of_actions(ctx: RunContext[Established]) -> bool:
        return not ctx.vars.no_rows or ctx.vars.actions >= max_actions - 1

    return [(EPISODE_OVER, "End"),
            (Rule(rows_or_out_of_actions, "rows, or the last action"), "Submit"),
            (Rule(lambda ctx: bool(match_candidates(ctx)) and bool(ctx.vars.matches),
                  "another condition for a value", reads=("matches", *FOUND)), "Match"),
            (Rule(lambda ctx: bool(compare_candidates(ctx)) and bool(ctx.vars.compares),
                  "another column for a number", reads=("compares", *JOINED)), "Compare"),
            (_when("another table", functools.partial(_may_try_another_table, max_actions=max_actions),
                   ("actions", "tables", "tried_tables")), "Table"),
            (always(), "Submit")]


# -- prompts ----------------------------------------------------------------------------------
Focus = Callable[[Progress], str]


def _prompt(ask: str, focus: Focus | None, *, schema: bool = True) -> tuple[
        Callable[[RunContext], list[Message]], Callable[[RunContext], list[Message]]]:
    """A choice's prompt and its baseline (the same prompt with the question's words left out):
    the table's columns, the question, the words of the question this part is about, the ask."""

    def build(ctx: RunContext, *, blind: bool) -> list[Message]:
        now = progress(ctx)
        lines = []
        if schema and now.vars.table is not None:
            lines.append(f"Table {now.vars.table} has columns: {', '.join(c.name for c in now.vars.columns or ())}")
            if now.vars.join is not None and now.vars.join_columns is not None:
                lines.append(f"Table {now.vars.join} has columns: {', '.join(c.name for c in now.vars.join_columns)}")
        lines.append(f"Question: {'N/A' if blind else ctx.task}")
        words = focus(now) if focus is not None else ""
        if words:
            lines.append(f"Part: {'N/A' if blind else words}")
        lines.append(ask)
        return [Message("system", SYSTEM), Message("user", "\n".join(lines))]

    return (lambda ctx: build(ctx, blind=False)), (lambda ctx: build(ctx, blind=True))


def _pick(name: str, candidates: Callable[[RunContext], list[str]], ask: str, chooser: ChoiceMethod,
          *, focus: Focus | None = None, schema: bool = True, **writes: Any) -> Pick:
    """The pick of one part; ``writes``: what it writes (``into=``, or ``update=`` and ``writes=``)."""
    prompt, baseline = _prompt(ask, focus, schema=schema)
    return Pick(candidates, prompt=prompt, baseline=baseline, baseline_weight=CALIBRATION.get(name, 1.0),
                method=chooser, name=name, when_empty="(none)", **writes)


def _group_words(now: Progress) -> str:
    """What the group column is about: the answer's words when the group is the answer ("the
    most matches", "with more than 50 players"), else the words after "each"."""
    if now.reading.by_count or now.reading.having is not None:
        return now.reading.answer_words
    return now.reading.group_words


def _number_words(now: Progress) -> str:
    index = _pending_number(now)
    return "" if index is None else now.reading.numbers[index].words


def build_scoped(*, chooser: ChoiceMethod = "auto", named_first: bool = False, max_turns: int | None = 10,
                 **_: Any) -> Flow:
    """The machine (module docstring). ``chooser`` is how every part is chosen (a
    :class:`~statebound.flow.Pick` method: ``"auto"``, the best the model can run; ``"score"``, the
    model's calibrated scores; ``"label"``, ``"grammar"``; ``"random"``, the control).
    ``named_first`` offers the tables and columns the question spells out alone when it spells any
    (:func:`named`): the machine's string matching decides those, the chooser the rest.
    ``max_turns`` is the environment's action limit. Other options (``max_tokens``,
    ``response_format``) do not apply: nothing is generated."""
    max_turns = actions_allowed(max_turns)

    def among(candidates: Callable[..., list[str]]) -> Callable[[RunContext], list[str]]:
        return functools.partial(candidates, named_first=named_first)

    join_due = _when("a table to join", functools.partial(_wants_join, max_actions=max_turns),
                     ("actions", "found", *JOINED))
    values_elsewhere = _when("the values are in none of its columns", lambda now: bool(now.values) and not now.all_found()
                             and _may_try_another_table(now, max_actions=max_turns), ("actions", "tried_tables", *FOUND))
    parts = _query_parts(_answer_due(named_first))

    def acting(name: str, tool: CallTool, exits: list[tuple[Rule, str] | FirstDue]) -> State:
        return State(name, outputs=[tool], transitions=[(EPISODE_OVER, "End"), *exits])

    states = [
        acting("Init", SHOW_TABLES, [(always(), "Table")]),
        State("Table", outputs=[_pick("table", among(table_candidates), "Table:", chooser, schema=False,
                                      update=start_table, writes=TABLE_START)],
              transitions=[(always(), "Describe")]),
        acting("Describe", DESCRIBE, [(VALUES_TO_LOOK_UP, "Lookup"), (join_due, "Join"), (KEY_TO_CHOOSE, "Key"),
                                      (values_elsewhere, "Table"), parts]),
        acting("Lookup", LOOK_UP, [(join_due, "Join"), (values_elsewhere, "Table"), parts]),
        State("Join", outputs=[_pick("join", join_candidates, "Join with table:", chooser, into="join")],
              transitions=[(always(), "Describe")]),
        State("Key", outputs=[_pick("key", key_candidates, "Join on:", chooser, into="key")],
              transitions=[(VALUES_IN_JOIN, "Lookup"), parts]),
        State("Match", outputs=[_pick("match", match_candidates, "Condition:", chooser, **appending("matches"))],
              transitions=[parts]),
        State("Answer", outputs=[_pick("answer", among(answer_candidates), "Column:", chooser, **appending("answers"),
                                       focus=lambda n: n.reading.answer_words)],
              transitions=[parts.starting_at("Answer")]),
        State("Group", outputs=[_pick("group", among(group_candidates), "Group rows by column:", chooser,
                                      **appending("groups"), focus=_group_words)],
              transitions=[parts.starting_at("Compare")]),  # an empty group pick must not come back here
        State("Compare", outputs=[_pick("compare", compare_candidates, "Condition:", chooser, **appending("compares"),
                                        focus=_number_words)],
              transitions=[parts.starting_at("Compare")]),
        State("Sort", outputs=[_pick("sort", among(sort_candidates), "Sort rows by column:", chooser,
                                     **appending("sorts"), focus=lambda n: n.reading.sort_words)],
              transitions=[(always(), "Run")]),
        State("Run", outputs=[RUN], transitions=_revisions(max_turns)),
        State("Submit", outputs=[SUBMIT], transitions=[(always(), "End")]),
        State("End", final=True),
    ]
    name = "stateflow-scoped" + ("-named" if named_first else "") + ("" if chooser in ("auto", "score") else f"-{chooser}")
    return Flow(name=name, initial="Init", states=states, vars=Established,
                max_turns=transitions_for(max_turns, per_action=4, outside=10))
