"""MariaDB backend: needs `scripts/mariadb.sh` to start a private server (conftest; skipped if it cannot)."""

from __future__ import annotations

import pytest

from statebound.envs.sql import SqlEnvironment, load_tasks
from statebound.envs.sql.mysql_backend import MySqlBackend, MySqlConfig, refusal_reason
from statebound.errors import EnvironmentUnavailable

NETWORK_TASK = next(t.id for t in load_tasks() if t.db == "network_1")


def test_refusals_cover_statements_that_commit() -> None:
    for sql in ("DROP TABLE t", "  commit", "/* hi */ ALTER TABLE t ADD x int", "/*!50000 DROP TABLE t */",
                "START TRANSACTION", "SET autocommit = 1", "LOCK TABLES t WRITE", "TRUNCATE t"):
        assert refusal_reason(sql) is not None, sql
    for sql in ("SELECT 1", "(SELECT 1)", "/* c */ select 1", "DESC t", "SHOW TABLES", "DELETE FROM t",
                "UPDATE t SET a = 1", "INSERT INTO t VALUES (1)", "WITH x AS (SELECT 1) SELECT * FROM x"):
        assert refusal_reason(sql) is None, sql


def test_unreachable_server_names_the_script() -> None:
    with pytest.raises(EnvironmentUnavailable, match="scripts/mariadb.sh start"):
        MySqlBackend(config=MySqlConfig(host="127.0.0.1", port=1))


@pytest.mark.integration
def test_mysql_show_desc_and_gold(mysql_backend: MySqlBackend) -> None:
    env = SqlEnvironment(backend=mysql_backend)
    env.reset(NETWORK_TASK)
    assert env.step("execute[SHOW TABLES]").observation == "[('friend',), ('highschooler',), ('likes',)]"
    assert env.step("execute[DESC highschooler]").observation.startswith("[('ID', 'int(11)', 'NO', 'PRI'")
    env.step(f"execute[{env.task.gold}]")
    env.step("submit")
    assert env.score().success
    env.close()


@pytest.mark.integration
def test_mysql_destructive_sql_stays_inside_its_episode(mysql_backend: MySqlBackend) -> None:
    first, second = SqlEnvironment(backend=mysql_backend), SqlEnvironment(backend=mysql_backend)
    first.reset(NETWORK_TASK)
    second.reset(NETWORK_TASK)
    assert first.step("execute[DELETE FROM likes]").ok
    assert first.step("execute[UPDATE highschooler SET name = 'x']").ok
    dropped = first.step("execute[DROP TABLE friend]")
    assert not dropped.ok and "not allowed in this environment" in dropped.observation
    committed = first.step("execute[COMMIT]")
    assert not committed.ok
    assert first.step("execute[SELECT count(*) FROM likes]").observation == "[(0,)]"
    assert second.step("execute[SELECT count(*) FROM likes]").observation == "[(10,)]"
    first.close()  # rolls back
    third = SqlEnvironment(backend=mysql_backend)
    third.reset(NETWORK_TASK)
    assert third.step("execute[SELECT count(*) FROM likes]").observation == "[(10,)]"
    assert third.step("execute[SELECT count(*) FROM highschooler WHERE name = 'Kyle']").observation == "[(1,)]"
    assert third.step("execute[SELECT count(*) FROM friend]").ok
    second.close()
    third.close()


@pytest.mark.integration
def test_mysql_long_queries_are_stopped(mysql_backend: MySqlBackend) -> None:
    env = SqlEnvironment(backend=mysql_backend, timeout_s=0.5)
    env.reset("0")
    step = env.step("execute[SELECT SLEEP(5)]")
    assert not step.ok and "max_statement_time" in step.observation
    env.close()
