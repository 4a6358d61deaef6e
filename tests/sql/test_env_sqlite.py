from __future__ import annotations

import hashlib

import pytest

from statebound.benchmarks.intercode_sql import InterCodeSql, SqlOptions
from statebound.envs.base import Environment
from statebound.envs.sql import SqlEnvironment, load_tasks
from statebound.envs.sql.sqlite_backend import SqliteBackend
from statebound.errors import DefinitionError

NETWORK_TASK = next(t.id for t in load_tasks() if t.db == "network_1")


@pytest.fixture
def env(sqlite_backend: SqliteBackend) -> SqlEnvironment:
    environment = SqlEnvironment(backend=sqlite_backend)
    yield environment
    environment.close()


def test_tasks_are_the_1034_upstream_ones() -> None:
    tasks = load_tasks()
    assert len(tasks) == 1034 and tasks[0].id == "0" and tasks[-1].id == "1033"
    assert len({t.db for t in tasks}) == 20


def test_implements_the_environment_protocol(env: SqlEnvironment) -> None:
    assert isinstance(env, Environment)


def test_show_tables_and_desc_look_like_mysql(env: SqlEnvironment) -> None:
    env.reset(NETWORK_TASK)
    assert env.step("execute[SHOW TABLES]").observation == "[('friend',), ('highschooler',), ('likes',)]"
    desc = env.step("execute[DESC highschooler]").observation
    assert desc.startswith("[('ID', 'int', 'NO', 'PRI', None, 'auto_increment'), ('name', 'text', 'YES', '', None, '')")
    assert env.step("execute[DESCRIBE `Likes`]").observation.startswith("[('student_id', 'int', 'NO', 'PRI'")
    missing = env.step("execute[DESC nope]")
    assert not missing.ok and missing.observation == "Error executing query: Table 'network_1.nope' doesn't exist"


def test_text_comparison_is_case_accent_and_trailing_space_insensitive(env: SqlEnvironment) -> None:
    env.reset(NETWORK_TASK)
    exact = env.step("execute[SELECT count(*) FROM highschooler WHERE name = 'Kyle']").observation
    assert exact == "[(1,)]"
    assert env.step("execute[SELECT count(*) FROM highschooler WHERE name = 'KYLE ']").observation == exact
    assert env.step("execute[SELECT count(*) FROM highschooler WHERE name = 'Kýle']").observation == exact
    grouped = env.step("execute[SELECT count(DISTINCT name) FROM highschooler]").observation
    assert grouped == env.step("execute[SELECT count(DISTINCT upper(name)) FROM highschooler]").observation


def test_gold_query_scores_one_and_error_scores_zero(env: SqlEnvironment) -> None:
    task = load_tasks()[0]
    env.reset(task.id)
    env.step(f"execute[{task.gold}]")
    assert env.step("submit").done
    assert env.score().reward == 1.0 and env.score().success

    env.reset(task.id)
    env.step(f"execute[{task.gold}]")
    env.step("execute[SELECT nonsense FROM nowhere]")  # the last action decides
    env.step("submit")
    # one failed of two commands and the submit: StateFlow's Table 1 counts the submit
    assert env.score().reward == 0.0 and env.score().metrics["error_rate"] == 1 / 3


def test_the_score_says_whether_the_gold_result_tells_queries_apart(sqlite_backend: SqliteBackend) -> None:
    """Task 404 counts rows of an empty wta_1 table: a count of nothing matches its gold 0."""
    benchmark = InterCodeSql(SqlOptions())
    found = {}
    for task_id, query in (("404", "SELECT count(*) FROM players WHERE 1 = 0"), ("3", "SELECT 1")):
        env = SqlEnvironment(backend=sqlite_backend)
        env.reset(task_id)
        env.step(f"execute[{query}]")
        task = next(t for t in benchmark.tasks() if t.id == task_id)
        found[task_id] = (env.score(), benchmark.grade(env, task, trace=None).meta)  # type: ignore[arg-type]
        env.close()
    (trivial, trivial_meta), (real, real_meta) = found["404"], found["3"]
    assert trivial.success and trivial.metrics["gold_informative"] == 0.0
    assert "informative_success" not in trivial_meta  # left out of SR % (informative)
    assert not real.success and real.metrics["gold_informative"] == 1.0 and real_meta["informative_success"] is False


def test_nothing_executed_scores_zero_and_invalid_actions_do_not_count(env: SqlEnvironment) -> None:
    env.reset("0")
    step = env.step("SELECT 1")
    assert not step.ok and "did not contain sql code" in step.observation
    env.step("submit")
    score = env.score()
    assert score.reward == 0.0 and score.metrics["invalid_actions"] == 1 and score.metrics["error_rate"] == 0


def test_turn_limit_submits_as_it_stands(sqlite_backend: SqliteBackend) -> None:
    env = SqlEnvironment(backend=sqlite_backend, max_turns=2)
    task = load_tasks()[0]
    env.reset(task.id)
    assert not env.step("execute[SHOW TABLES]").done
    last = env.step(f"execute[{task.gold}]")
    assert last.done and last.info["auto_submitted"]
    assert env.score().success
    assert env.step("execute[SELECT 1]").done  # nothing runs after the end


def test_observations_are_capped(env: SqlEnvironment) -> None:
    env.reset(next(t.id for t in load_tasks() if t.db == "world_1"))
    rows = env.step("execute[SELECT Code FROM country]").observation
    assert rows.count("(") == 25
    long_error = env.step("execute[SELECT " + "x" * 500 + " FROM country]")
    assert len(long_error.observation) == 350


def test_long_queries_are_stopped(sqlite_backend: SqliteBackend) -> None:
    env = SqlEnvironment(backend=sqlite_backend, timeout_s=0.2)
    env.reset("0")
    step = env.step("execute[WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c]")
    assert not step.ok and "max_statement_time" in step.observation


def test_destructive_sql_stays_inside_its_episode(sqlite_backend: SqliteBackend) -> None:
    files = sorted(sqlite_backend.directory.glob("*.sqlite"))
    before = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    first, second = SqlEnvironment(backend=sqlite_backend), SqlEnvironment(backend=sqlite_backend)
    first.reset(NETWORK_TASK)
    second.reset(NETWORK_TASK)
    assert first.step("execute[DELETE FROM likes]").ok
    assert first.step("execute[UPDATE highschooler SET name = 'x']").ok
    assert first.step("execute[DROP TABLE friend]").ok
    assert first.step("execute[SELECT count(*) FROM likes]").observation == "[(0,)]"
    # a concurrent episode and a later one both see the original data
    assert second.step("execute[SELECT count(*) FROM likes]").observation == "[(10,)]"
    assert second.step("execute[SELECT count(*) FROM friend]").ok
    first.reset(NETWORK_TASK)
    assert first.step("execute[SELECT count(*) FROM highschooler WHERE name = 'Kyle']").observation == "[(1,)]"
    after = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    assert after == before
    first.close()
    second.close()


def test_conversion_is_cached_by_dump_hash(sqlite_backend: SqliteBackend) -> None:
    again = SqliteBackend(cache_dir=sqlite_backend.directory.parent.parent)
    assert again.directory == sqlite_backend.directory
    assert len(list(again.directory.glob("*.sqlite"))) == 20


def test_unknown_task_is_a_clear_error(env: SqlEnvironment) -> None:
    with pytest.raises(DefinitionError, match="ids are '0' to '1033'"):
        env.reset("5000")
    with pytest.raises(DefinitionError, match="reset"):
        SqlEnvironment(backend=env.backend).step("submit")
