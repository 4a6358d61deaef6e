"""stateflow-scoped's joins: the keys column names suggest, and the machine joining a second table
on real SQLite databases with a scorer double (which prefers given texts)."""

from __future__ import annotations

import pytest
from test_sql_scoped import env_actions, preferring, queries, run

from statebound.agents.sql.joins import JoinKey, join_keys, name_words
from statebound.agents.sql.reading import read_question
from statebound.agents.sql.sketch import Column, Sketch
from statebound.envs.sql.sqlite_backend import SqliteBackend
from statebound.flow import picks

INT, TEXT = "int", "text"


def columns(*names: str, kind: str = INT) -> list[Column]:
    return [Column(name, kind) for name in names]


# -- keys from column names ------------------------------------------------------------------
def test_name_words_split_case_underscores_and_plurals() -> None:
    assert name_words("DestAirport") == ["dest", "airport"]
    assert name_words("Ref_template_types") == ["ref", "template", "type"]
    assert name_words("countries") == ["country"]


def test_a_shared_key_like_name_is_the_key_and_alone() -> None:
    keys = join_keys("people", columns("People_ID", "Name", "Height"),
                     "poker_player", columns("Poker_Player_ID", "People_ID", "Earnings"))
    assert keys == [JoinKey("People_ID", "People_ID")]
    assert keys[0].text("people", "poker_player") == "people.People_ID = poker_player.People_ID"
    assert keys[0].sql("people", "poker_player") == "`people`.`People_ID` = `poker_player`.`People_ID`"


def test_bare_id_is_never_shared_but_a_column_named_after_the_table_links_to_it() -> None:
    channel = [Column("id", TEXT), Column("series_name", TEXT)]
    cartoon = [Column("id", "real"), Column("Title", TEXT), Column("Channel", TEXT)]
    assert join_keys("TV_Channel", channel, "Cartoon", cartoon) == [JoinKey("id", "Channel")]


def test_columns_named_after_the_other_table_are_offered_each() -> None:
    flights = columns("Airline", "FlightNo") + [Column("SourceAirport", TEXT), Column("DestAirport", TEXT)]
    airports = [Column("City", TEXT), Column("AirportCode", TEXT), Column("AirportName", TEXT)]
    assert join_keys("flights", flights, "airports", airports) == [
        JoinKey("SourceAirport", "AirportCode"), JoinKey("DestAirport", "AirportCode")]


def test_a_key_links_numbers_to_numbers_and_text_to_text_only() -> None:
    assert join_keys("visit", [Column("visitor_ID", TEXT)], "visitor", columns("ID")) == []
    assert join_keys("visit", columns("visitor_ID"), "visitor", columns("ID")) == [JoinKey("visitor_ID", "ID")]
    assert join_keys("airports", [Column("Country", TEXT)], "airlines", [Column("Country", TEXT)]) == []


def test_a_sketch_with_a_join_renders_it_after_from() -> None:
    sketch = Sketch("templates", ("`templates`.`Template_ID`",), join="ref_template_types",
                    on="`templates`.`Template_Type_Code` = `ref_template_types`.`Template_Type_Code`",
                    where=("`ref_template_types`.`Template_Type_Description` = 'Presentation'",))
    assert sketch.sql() == (
        "SELECT `templates`.`Template_ID` FROM `templates` JOIN `ref_template_types` ON "
        "`templates`.`Template_Type_Code` = `ref_template_types`.`Template_Type_Code` "
        "WHERE `ref_template_types`.`Template_Type_Description` = 'Presentation'")


@pytest.mark.parametrize(("question", "counted"), [
    ("For each stadium, how many concerts play there?", "how many concerts play there"),
    ("Show names of teachers that teach at least two courses.", "that teach at least two courses"),
    ("What is the document id and name with greatest number of paragraphs?", "greatest number of paragraphs"),
    ("What are the names of poker players?", ""),
])
def test_the_reading_names_what_a_count_counts(question: str, counted: str) -> None:
    tables = ("stadium", "concert", "teacher", "course", "paragraphs", "documents")
    assert read_question(question, tables=tables).counted_words == counted


# -- the machine joining, on the real databases ---------------------------------------------
def test_a_value_the_table_lacks_is_looked_up_in_a_joined_table(sqlite_backend: SqliteBackend) -> None:
    # "What are the template ids with template type description "Presentation"."
    llm = preferring("templates", "ref_template", "Template_ID")
    result, score, _ = run("546", llm, sqlite_backend)
    assert result.trajectory == ("Init", "Table", "Describe", "Lookup", "Join", "Describe", "Key", "Lookup", "Match",
                                 "Answer", "Run", "Submit", "End")
    assert [(p.name, p.text) for p in picks(result.history)] == [
        ("table", "templates"), ("join", "ref_template_types"),
        ("key", "templates.Template_Type_Code = ref_template_types.Template_Type_Code"),
        ("match", "`ref_template_types`.`Template_Type_Description` = 'Presentation'"),
        ("answer", "templates.Template_ID")]
    assert queries(result) == [
        "SELECT `templates`.`Template_ID` FROM `templates` JOIN `ref_template_types` ON "
        "`templates`.`Template_Type_Code` = `ref_template_types`.`Template_Type_Code` "
        "WHERE `ref_template_types`.`Template_Type_Description` = 'Presentation'"]
    assert score.success
    answer = picks(result.history, "answer")[0]
    assert {c.split(".")[0] for c in answer.candidates} == {"templates", "ref_template_types"}


def test_the_chooser_picks_the_key_among_several(sqlite_backend: SqliteBackend) -> None:
    # "How many flights arriving in Aberdeen city?": flights name airports twice (source, destination)
    result, _, _ = run("31", preferring("DestAirport", "airports", "flights"), sqlite_backend)
    key = picks(result.history, "key")[0]
    assert key.candidates == ("airports.AirportCode = flights.SourceAirport",
                              "airports.AirportCode = flights.DestAirport")
    assert key.text == "airports.AirportCode = flights.DestAirport" and key.scores is not None
    assert "JOIN `flights` ON `airports`.`AirportCode` = `flights`.`DestAirport`" in queries(result)[0]


def test_a_counted_table_is_joined_for_a_grouped_count(sqlite_backend: SqliteBackend) -> None:
    # "For each stadium, how many concerts play there?" asked of stadium: concerts are counted
    result, _, env = run("827", preferring("stadium.Name", "stadium", "concert"), sqlite_backend)
    assert [(p.name, p.text) for p in picks(result.history)][:2] == [("table", "stadium"), ("join", "concert")]
    assert picks(result.history, "join")[0].candidates == ("concert",)  # the table the question names
    assert queries(result) == ["SELECT count(*), `stadium`.`Name` FROM `stadium` JOIN `concert` ON "
                               "`stadium`.`Stadium_ID` = `concert`.`Stadium_ID` GROUP BY `stadium`.`Name`"]
    assert env_actions(result)[:3] == ["execute[SHOW TABLES]", "execute[DESC `stadium`]", "execute[DESC `concert`]"]


def test_a_question_whose_values_are_all_in_the_table_joins_nothing(sqlite_backend: SqliteBackend) -> None:
    result, score, _ = run("28", preferring("airlines", "`Airline` =", "Abbreviation"), sqlite_backend)
    assert "Join" not in result.trajectory and score.success


def test_the_random_control_joins_too(sqlite_backend: SqliteBackend) -> None:
    result, _, _ = run("546", None, sqlite_backend, agent="stateflow-scoped-random")
    joined = picks(result.history, "join")
    assert joined and joined[0].method == "random"
    assert all(p.method == "random" for p in picks(result.history))



def test_a_table_no_key_links_is_given_up(sqlite_backend: SqliteBackend) -> None:
    # "How many employees are there?" asked of shop: employee is named, but only hiring links them
    result, _, _ = run("652", preferring("shop", "employee"), sqlite_backend)
    assert [(p.name, p.text) for p in picks(result.history)] == [("table", "shop"), ("join", "employee")]
    assert "Key" not in result.trajectory
    assert queries(result) == ["SELECT count(*) FROM `shop`"]
