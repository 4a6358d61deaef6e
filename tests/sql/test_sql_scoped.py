"""stateflow-scoped: reading questions, the query pieces, candidates on real SQLite databases,
and the transition table state by state with a scorer double (which prefers given texts)."""

from __future__ import annotations

import random
from dataclasses import fields

import pytest

from statebound.agents.sql import AGENTS
from statebound.agents.sql.progress import Established
from statebound.agents.sql.reading import Comparison, read_question
from statebound.agents.sql.scoped import build_scoped
from statebound.agents.sql.sketch import (
    Column,
    Sketch,
    columns_of,
    lookup_sql,
    parse_rows,
    sql_literal,
)
from statebound.benchmarks.intercode_sql import SqlOptions
from statebound.contract.benchmark import Setup, Task
from statebound.envs.sql import SqlEnvironment, load_tasks
from statebound.envs.sql.sqlite_backend import SqliteBackend
from statebound.flow import ExitReason, check_flow, picks
from statebound.flow.draw import arrows
from statebound.llm.testing import ScriptedLLM


def preferring(*liked: str):
    """A scorer double: candidates containing an earlier ``liked`` text score higher; others -9.
    The baseline prompt (question "N/A") scores everything alike, so calibration keeps the order."""

    def scorer(prompt: str, text: str) -> list[float]:
        if "Question: N/A" in prompt:
            return [-5.0] * len(text.split())
        rank = next((i for i, like in enumerate(liked) if like.lower() in text.lower()), None)
        value = -9.0 if rank is None else -1.0 - 0.1 * rank
        return [value] * len(text.split())

    return ScriptedLLM(scorer=scorer)


def flow_of(agent: str, task: str, *, max_turns: int = 10):
    """The flow a registered agent runs on a task (as ``statebound eval`` builds it)."""
    setup = Setup(options=SqlOptions(), task=Task(task, load_tasks()[int(task)].query), seed=0, max_turns=max_turns)
    return AGENTS[agent].build(setup).flow


def run(task: str, llm, backend: SqliteBackend, agent: str = "stateflow-scoped"):
    env = SqlEnvironment(backend=backend)
    question = env.reset(task)
    result = flow_of(agent, task).run_sync(question, llm=llm, deps=env)
    return result, env.score(), env


def env_actions(result) -> list[str]:
    """The actions the run sent to the environment, in order."""
    return [e.data["action"] for e in result.history if isinstance(e.data, dict) and "action" in e.data]


def queries(result) -> list[str]:
    return [e.data["query"] for e in result.history if isinstance(e.data, dict) and "query" in e.data]


# -- reading the question --------------------------------------------------------------------
@pytest.mark.parametrize(("question", "expected"), [
    ("How many singers do we have?", {"count": True, "aggregates": (), "group": False}),
    ("How many distinct nationalities are there?", {"count": True, "distinct": True}),
    ("What are the minimum and maximum number of products across all the shops?",
     {"aggregates": ("min", "max"), "count": False}),
    ("For each citizenship, what is the maximum net worth?", {"aggregates": ("max",), "group": True}),
    ("List the title of all cartoons in alphabetical order.", {"sort": "ASC", "superlative": None}),
    ("List the section_name in reversed lexicographical order.", {"sort": "DESC"}),
    ("What are the names of the nations with the 3 lowest populations?", {"superlative": "ASC", "limit": 3}),
    ("Which year had the most matches?", {"superlative": "DESC", "by_count": True, "limit": 1}),
    ("What are the codes of countries with more than 50 players?",
     {"having": Comparison(">", "50", "countries with more than 50 players"), "group": True, "numbers": ()}),
    ("Which abbreviation corresponds to Jetblue Airways?", {"literals": ("Jetblue Airways",), "asked": 1}),
    ("Show the name of singers whose birth year is either 1948 or 1949?",
     {"either": True, "numbers": (Comparison("=", "1948", "birth year is either 1948 or"),
                                  Comparison("=", "1949", "is either 1948 or 1949"))}),
    ("What are the names of conductors whose nationalities are not \"USA\"?", {"literals": ("USA",), "negated": True}),
    ("What is the average age of the visitors whose membership level is not higher than 4?",
     {"numbers": (Comparison("<=", "4", "is not higher than 4"),)}),
    ("Show name, country, age for all singers ordered by age from the oldest to the youngest.",
     {"asked": 3, "sort": "DESC"}),
])
def test_reading_a_question(question: str, expected: dict) -> None:
    reading = read_question(question, tables=("singer", "players", "matches", "country"))
    assert {key: getattr(reading, key) for key in expected} == expected


def test_the_words_each_part_is_about() -> None:
    reading = read_question("What is the name of the conductor who has worked the greatest number of years?")
    assert (reading.answer_words, reading.sort_words) == ("the name", "greatest number of years")
    assert read_question("For each citizenship, what is the maximum net worth?").group_words == "each citizenship"


# -- the query's pieces ------------------------------------------------------------------------
def test_sketch_renders_each_part() -> None:
    sketch = Sketch("singer", ("`Name`", "count(*)"), where=("`Age` > 30", "`Country` = 'France'"),
                    either=True, group="`Name`", having="count(*) > 1", order="count(*) DESC", limit=3)
    assert sketch.sql() == ("SELECT `Name`, count(*) FROM `singer` WHERE `Age` > 30 OR `Country` = 'France' "
                            "GROUP BY `Name` HAVING count(*) > 1 ORDER BY count(*) DESC LIMIT 3")
    assert Sketch("t", ("`a`",), distinct=True).sql() == "SELECT DISTINCT `a` FROM `t`"
    assert sql_literal("O'Hara") == "'O''Hara'" and sql_literal("1980") == "1980" and sql_literal(2.5) == "2.5"


def test_rows_are_read_back_from_observations_of_both_backends() -> None:
    assert parse_rows("Observation: [('a', 1), ('b', None)]") == [("a", 1), ("b", None)]
    assert parse_rows("Observation: [(Decimal('193.00'), datetime.date(2010, 1, 2))]") == [
        ("193.00", "datetime.date(2010, 1, 2)")]
    assert parse_rows("Observation: Error executing query: no such table: x") is None
    columns = columns_of([("Singer_ID", "int", "NO", "PRI", None, ""), ("Name", "text", "YES", "", None, ""),
                          ("Song_release_year", "text", "YES", "", None, "")])
    assert [(c.name, c.numeric, c.comparable) for c in columns] == [
        ("Singer_ID", True, True), ("Name", False, False), ("Song_release_year", False, True)]
    assert Column("Price", "decimal(10,2)").numeric


def test_one_lookup_finds_which_columns_hold_a_value(sqlite_backend: SqliteBackend) -> None:
    env = SqlEnvironment(backend=sqlite_backend)
    env.reset("28")
    sql = lookup_sql("airlines", ["Airline", "Abbreviation", "Country"], ["Jetblue Airways", "USA"])
    rows = parse_rows(env.step(f"execute[{sql}]").observation)
    assert rows is not None and ("Airline", "JetBlue Airways") in rows and ("Country", "USA") in rows
    env.close()


# -- the machine, state by state ----------------------------------------------------------------
def test_a_value_question_walks_lookup_match_answer_run_submit(sqlite_backend: SqliteBackend) -> None:
    llm = preferring("airlines", "`Airline` =", "Abbreviation")
    result, score, _ = run("28", llm, sqlite_backend)
    assert result.trajectory == ("Init", "Table", "Describe", "Lookup", "Match", "Answer", "Run", "Submit", "End")
    assert queries(result) == ["SELECT `Abbreviation` FROM `airlines` WHERE `Airline` = 'JetBlue Airways'"]
    assert score.success and result.exit_reason is ExitReason.FINAL
    chosen = {p.name: p for p in picks(result.history)}
    assert chosen["table"].candidates == ("airlines", "airports", "flights")  # SHOW TABLES
    assert chosen["table"].method == "score" and chosen["table"].scores is not None
    assert "Airline" not in chosen["answer"].candidates  # the value's column is not an answer
    assert chosen["match"].candidates == ("`Airline` = 'JetBlue Airways'",)  # one match: no model call


def test_a_count_needs_only_the_table(sqlite_backend: SqliteBackend) -> None:
    result, score, _ = run("297", preferring("singer"), sqlite_backend)
    assert result.trajectory == ("Init", "Table", "Describe", "Run", "Submit", "End")
    assert queries(result) == ["SELECT count(*) FROM `singer`"] and score.success


def test_a_grouped_count_picks_the_group_column(sqlite_backend: SqliteBackend) -> None:
    result, _, _ = run("568", preferring("highschooler", "grade"), sqlite_backend)
    assert "Group" in result.trajectory
    assert queries(result) == ["SELECT count(*), `grade` FROM `highschooler` GROUP BY `grade`"]


def test_no_rows_go_back_to_the_number_comparison_then_submit(sqlite_backend: SqliteBackend) -> None:
    # "the names of all high schoolers in grade 10": ID = 10 has no rows, so Compare picks again
    llm = preferring("highschooler", "name", "`ID`", "`grade`")
    result, score, _ = run("48", llm, sqlite_backend)
    assert result.trajectory[-6:] == ("Compare", "Run", "Compare", "Run", "Submit", "End")
    assert queries(result) == ["SELECT `name` FROM `highschooler` WHERE `ID` = 10",
                               "SELECT `name` FROM `highschooler` WHERE `grade` = 10"]
    assert score.success
    tried = [p for p in picks(result.history) if p.name == "compare"]
    assert "`ID` = 10" not in tried[1].candidates  # a revision never repeats a choice


def test_a_table_without_the_questions_values_is_left_for_another(sqlite_backend: SqliteBackend) -> None:
    # "What country is Jetblue Airways affiliated with?": airports holds no "Jetblue Airways"; the
    # machine first tries joining airlines, whose columns share no key with airports, so airlines
    # becomes the table (its columns already known: no second DESC)
    llm = preferring("airports", "airlines", "Country")
    result, score, env = run("42", llm, sqlite_backend)
    assert [(p.name, p.text) for p in picks(result.history)][:3] == [
        ("table", "airports"), ("join", "airlines"), ("table", "airlines")]
    assert result.trajectory[:10] == ("Init", "Table", "Describe", "Lookup", "Join", "Describe", "Table", "Describe",
                                      "Lookup", "Match")
    assert queries(result) == ["SELECT `Country` FROM `airlines` WHERE `Airline` = 'JetBlue Airways'"]
    assert score.success
    assert [a for a in env_actions(result) if a.startswith("execute[DESC")] == ["execute[DESC `airports`]",
                                                                                "execute[DESC `airlines`]"]


def test_each_part_writes_what_it_establishes(sqlite_backend: SqliteBackend) -> None:
    # task 42 again: choosing airlines after airports starts the table's fields over (the joined
    # table and the parts chosen), and keeps what the run learnt of the database
    llm = preferring("airports", "airlines", "Country")
    result, _, env = run("42", llm, sqlite_backend)
    now = result.vars
    assert (now.table, now.tried_tables, now.join, now.key) == ("airlines", ("airports",), None, None)
    assert (now.matches, now.answers, now.groups) == (("`Airline` = 'JetBlue Airways'",), ("Country",), ())
    assert list(now.described) == ["airports", "airlines"] and now.columns == now.described["airlines"]
    assert now.found and not now.no_rows and now.done and now.actions == len(env_actions(result))


def test_every_state_declares_its_writes_and_the_query_parts_are_one_group() -> None:
    flow = build_scoped()
    assert [d for d in check_flow(flow) if d.severity != "info"] == []
    writes = {state.name: {name for output in state.outputs for name in output.writes} for state in flow.states}
    every = {f.name for f in fields(Established)}
    assert set().union(*writes.values()) == every
    assert max(len(names) for names in writes.values()) < len(every) - 3  # none declares writing everything
    drawn = arrows(flow)
    assert len(drawn) <= 33
    group = [(target, label) for source, target, label in drawn if source == "(query part)"]
    assert [target for target, _ in group] == ["Match", "Answer", "Group", "Compare", "Sort", "Run"]
    assert {source for source, target, _ in drawn if target == "(query part)"} == {
        "Describe", "Lookup", "Key", "Match", "Answer", "Group", "Compare"}


def test_the_random_control_needs_no_model_and_repeats(sqlite_backend: SqliteBackend) -> None:
    assert {"stateflow-scoped", "stateflow-scoped-random"} <= set(AGENTS)
    first, _, _ = run("28", None, sqlite_backend, agent="stateflow-scoped-random")
    again, _, _ = run("28", None, sqlite_backend, agent="stateflow-scoped-random")
    assert [p.text for p in picks(first.history)] == [p.text for p in picks(again.history)]
    assert {p.method for p in picks(first.history)} == {"random"} and first.usage.calls == 0
    assert first.exit_reason is ExitReason.FINAL


def test_the_environments_action_limit_ends_the_episode(sqlite_backend: SqliteBackend) -> None:
    env = SqlEnvironment(backend=sqlite_backend, max_turns=3)
    question = env.reset("89")
    result = flow_of("stateflow-scoped", "89", max_turns=3).run_sync(question, llm=preferring("cars_data"), deps=env)
    assert result.exit_reason is ExitReason.FINAL and env.score().metrics["turns"] == 3


def test_the_rules_declare_every_variable_they_read(sqlite_backend: SqliteBackend, monkeypatch) -> None:
    # the conditions read the variables through Progress, where bytecode inference sees nothing: their
    # reads are declared, and traced here over tasks from every part of the data (random picks)
    from traced_reads import tracing_reads

    trace = tracing_reads(monkeypatch)
    rng = random.Random(0)
    llm = ScriptedLLM(scorer=lambda prompt, text: [rng.uniform(-9.0, -1.0)] * len(text.split()))
    for task in range(0, 1000, 40):
        env = SqlEnvironment(backend=sqlite_backend)
        flow_of("stateflow-scoped", str(task)).run_sync(env.reset(str(task)), llm=llm, deps=env)
    assert len(trace.read) >= 12 and {"matches", "found", "join_found"} <= trace.read["a value without a condition"]
    assert trace.undeclared() == {}
