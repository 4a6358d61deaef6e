"""stateflow-scoped with the real embedded model (SQLite), and on MariaDB (scorer double)."""

from __future__ import annotations

import os

import pytest
from test_sql_scoped import flow_of, preferring, queries

from statebound.envs.sql import SqlEnvironment
from statebound.envs.sql.mysql_backend import MySqlBackend
from statebound.envs.sql.sqlite_backend import SqliteBackend
from statebound.flow import ExitReason, picks
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.registry import open_model

pytestmark = pytest.mark.integration
os.environ.setdefault("STATEBOUND_THREADS", "1")


@pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed")
def test_the_embedded_model_answers_a_count_by_choosing_the_table(sqlite_backend: SqliteBackend) -> None:
    env = SqlEnvironment(backend=sqlite_backend)
    question = env.reset("297")  # How many singers do we have?
    result = flow_of("stateflow-scoped", "297").run_sync(question, llm=open_model("smollm2"), deps=env)
    assert result.exit_reason is ExitReason.FINAL and env.score().success
    table = picks(result.history)[0]
    assert (table.name, table.text, table.method) == ("table", "singer", "score")
    assert table.scores is not None and len(table.scores) == len(table.candidates) == 4
    assert 0 < result.usage.prompt_tokens < 1000 and result.usage.completion_tokens == 0


def test_the_machine_runs_on_mariadb(mysql_backend: MySqlBackend) -> None:
    env = SqlEnvironment(backend=mysql_backend)
    question = env.reset("28")
    result = flow_of("stateflow-scoped", "28").run_sync(
        question, llm=preferring("airlines", "`Airline` =", "Abbreviation"), deps=env)
    assert queries(result) == ["SELECT `Abbreviation` FROM `airlines` WHERE `Airline` = 'JetBlue Airways'"]
    assert env.score().success
    env.close()


@pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed")
def test_the_embedded_model_joins_the_table_that_holds_the_value(sqlite_backend: SqliteBackend) -> None:
    # "What are the template ids with template type description "Presentation"." asked of templates:
    # the model chooses, among the other three tables, the one the look-up then finds the value in
    env = SqlEnvironment(backend=sqlite_backend)
    question = env.reset("546")
    result = flow_of("stateflow-scoped", "546").run_sync(question, llm=open_model("smollm2"), deps=env)
    assert result.exit_reason is ExitReason.FINAL
    join = picks(result.history, "join")[0]
    assert join.method == "score" and join.scores is not None and len(join.candidates) == 3
    assert join.text == "ref_template_types"
    assert ("JOIN `ref_template_types` ON `templates`.`Template_Type_Code` = `ref_template_types`.`Template_Type_Code` "
            "WHERE `ref_template_types`.`Template_Type_Description` = 'Presentation'") in queries(result)[0]


def test_the_machine_joins_on_mariadb(mysql_backend: MySqlBackend) -> None:
    env = SqlEnvironment(backend=mysql_backend)
    question = env.reset("546")
    result = flow_of("stateflow-scoped", "546").run_sync(
        question, llm=preferring("templates", "ref_template", "Template_ID"), deps=env)
    assert [p.name for p in picks(result.history)] == ["table", "join", "key", "match", "answer"]
    assert " JOIN " in queries(result)[0] and env.score().success
    env.close()
