"""Hostile SQL stays inside its episode's database, on both backends.

Each hostile statement runs through the environment, then the tests check concretely: the agent
reads an ordinary error naming the refusal, no file appeared in the host directory the statement
aimed at (nor in the working directory), another run's store is byte for byte unchanged, and the
episode's own database still answers. The MariaDB tests also send the statements straight to the
server, past the client-side refusals, to prove the grants refuse them too.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from statebound.agents.sql import build_replay
from statebound.envs.sql import ERROR_PREFIX, Backend, QueryFailed, SqlEnvironment, load_tasks
from statebound.envs.sql.isolation import (
    MYSQL_REFUSED_PHRASES,
    NOT_ALLOWED,
    SQLITE_ALLOWED_PRAGMAS,
    SQLITE_DENIED_ACTIONS,
    SQLITE_DENIED_FUNCTIONS,
    SQLITE_DENIED_TABLES,
    mysql_refusal,
    sqlite_refusal,
)
from statebound.envs.sql.mysql_backend import MySqlBackend
from statebound.envs.sql.sqlite_backend import SqliteBackend
from statebound.llm.testing import ScriptedLLM

NETWORK_TASK = next(t for t in load_tasks() if t.db == "network_1")
LIKES = "execute[SELECT count(*) FROM likes]"  # 10 rows in every fresh copy
DOCS = Path(__file__).resolve().parents[2] / "docs" / "intercode-sql.md"


class Host:
    """A directory hostile SQL aims at, holding another run's result store."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = root / "run.sqlite"
        conn = sqlite3.connect(self.store)
        conn.execute("CREATE TABLE episodes (task TEXT, reward REAL)")
        conn.executemany("INSERT INTO episodes VALUES (?, ?)", [("0", 1.0), ("1", 0.0)])
        conn.commit()
        conn.close()
        self.store_digest = self._digest()
        self.listing = self._listing()

    def _digest(self) -> str:
        return hashlib.sha256(self.store.read_bytes()).hexdigest()

    def _listing(self) -> list[str]:
        return sorted(p.name for p in self.root.iterdir())

    def assert_untouched(self) -> None:
        assert self._listing() == self.listing, "a file appeared on the host"
        assert self._digest() == self.store_digest, "another run's store changed"

    def sql(self, template: str) -> str:
        return template.format(dir=self.root, store=self.store)


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Host:
    monkeypatch.chdir(tmp_path)  # relative file names land here, where the tests look
    return Host(tmp_path)


def _refused(env: SqlEnvironment, sql: str) -> str:
    step = env.step(f"execute[{sql}]")
    assert not step.ok and step.observation.startswith(ERROR_PREFIX), step.observation
    assert step.info["action"] == "execute" and "error" in step.info
    return str(step.info["error"])


# -- the rules as data ---------------------------------------------------------------------------

def test_sqlite_rules_refuse_what_leaves_the_episode() -> None:
    assert sqlite_refusal(sqlite3.SQLITE_SELECT, None, None) is None
    assert sqlite_refusal(sqlite3.SQLITE_DROP_TABLE, "likes", None) is None  # the copy's own table
    assert sqlite_refusal(sqlite3.SQLITE_PRAGMA, "table_info", "likes") is None
    assert sqlite_refusal(sqlite3.SQLITE_FUNCTION, None, "count") is None
    assert sqlite_refusal(sqlite3.SQLITE_READ, "likes", "student_id") is None
    refused = {
        "ATTACH": sqlite_refusal(sqlite3.SQLITE_ATTACH, "/tmp/x.db", None),
        "DETACH": sqlite_refusal(sqlite3.SQLITE_DETACH, "m", None),
        "PRAGMA writable_schema": sqlite_refusal(sqlite3.SQLITE_PRAGMA, "WRITABLE_SCHEMA", "1"),
        "load_extension()": sqlite_refusal(sqlite3.SQLITE_FUNCTION, None, "LOAD_EXTENSION"),
        "reading sqlite_stmt": sqlite_refusal(sqlite3.SQLITE_READ, "sqlite_stmt", "sql"),
        "CREATE VIRTUAL TABLE": sqlite_refusal(sqlite3.SQLITE_CREATE_VTABLE, "v", "fts5"),
        "action 99": sqlite_refusal(99, None, None),  # a code this list does not know yet
    }
    for name, reason in refused.items():
        assert reason is not None and name in reason and NOT_ALLOWED in reason, name


def test_mysql_rules_refuse_file_access_anywhere_in_the_statement() -> None:
    for sql in ("SELECT * FROM likes INTO OUTFILE '/tmp/x'", "select 1 into\n dumpfile '/tmp/x'",
                "SELECT name, load_file ('/etc/passwd') FROM highschooler",
                "/* c */ LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE likes",
                "CREATE USER evil", "GRANT ALL ON *.* TO statebound", "SET PASSWORD = PASSWORD('x')",
                "/*!50000 SET PASSWORD = PASSWORD('x') */", "ALTER USER statebound IDENTIFIED BY 'x'",
                "ROLLBACK AND NO CHAIN RELEASE", "/* c */ rollback\n release"):
        reason = mysql_refusal(sql)
        assert reason is not None and NOT_ALLOWED in reason, sql
    assert mysql_refusal("SELECT name INTO @n FROM highschooler LIMIT 1") is None
    assert mysql_refusal("ROLLBACK") is None
    assert mysql_refusal("SELECT count(*) FROM highschooler WHERE name = 'outfile'") is None


def test_the_docs_table_names_every_rule() -> None:
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("### Isolation"):]
    names = [*SQLITE_ALLOWED_PRAGMAS, *SQLITE_DENIED_FUNCTIONS, *SQLITE_DENIED_TABLES,
             *(what.split(" (")[0] for what, _ in SQLITE_DENIED_ACTIONS.values()),
             *(what.replace("SELECT ... ", "") for what in MYSQL_REFUSED_PHRASES)]
    missing = [name for name in names if name not in section]
    assert not missing, f"docs/intercode-sql.md's isolation section lacks {missing}"


# -- SQLite: hostile statements through the environment ------------------------------------------

SQLITE_HOSTILE = {
    "vacuum into a host file": "VACUUM INTO '{dir}/copy.db'",
    "vacuum": "VACUUM",
    "attach a new file": "ATTACH DATABASE '{dir}/made.db' AS m",
    "attach a relative file": "ATTACH 'made.db' AS m",
    "attach by uri": "ATTACH 'file:{dir}/uri.db?mode=rwc' AS m",
    "attach another run's store": "ATTACH DATABASE '{store}' AS s",
    "attach memory": "ATTACH ':memory:' AS m",
    "detach": "DETACH DATABASE main",
    "writable schema": "PRAGMA writable_schema = ON",
    "journal to a file": "PRAGMA journal_mode = WAL",
    "temp tables to files": "PRAGMA temp_store = FILE",
    "raise the size cap": "PRAGMA max_page_count = 1000000000",
    "pragma as a table": "SELECT * FROM pragma_database_list",
    "load an extension": "SELECT load_extension('{dir}/evil.so')",
    "fts3 tokenizer pointer": "SELECT fts3_tokenizer('simple', x'4141414141414141')",
    "virtual table": "CREATE VIRTUAL TABLE v USING fts4(a)",
    "the connection's statements": "SELECT sql FROM sqlite_stmt",
}


def _open(backend: Backend) -> SqlEnvironment:
    env = SqlEnvironment(backend=backend, max_turns=None)
    env.reset(NETWORK_TASK.id)
    return env


def _assert_refused_and_goes_on(env: SqlEnvironment, host: Host, template: str) -> None:
    error = _refused(env, host.sql(template))
    assert f"{NOT_ALLOWED}: " in error, error
    host.assert_untouched()
    assert env.step(LIKES).observation == "[(10,)]"
    assert env.step(f"execute[{NETWORK_TASK.gold}]").ok


@pytest.fixture
def sqlite_env(sqlite_backend: SqliteBackend) -> Iterator[SqlEnvironment]:
    env = _open(sqlite_backend)
    yield env
    env.close()


@pytest.mark.parametrize("template", SQLITE_HOSTILE.values(), ids=SQLITE_HOSTILE.keys())
def test_sqlite_hostile_statement_is_refused_and_the_episode_goes_on(
        template: str, sqlite_env: SqlEnvironment, host: Host) -> None:
    _assert_refused_and_goes_on(sqlite_env, host, template)


def test_sqlite_attach_then_write_or_read_reaches_no_file(sqlite_env: SqlEnvironment, host: Host) -> None:
    _refused(sqlite_env, host.sql("ATTACH DATABASE '{dir}/made.db' AS m"))
    assert "unknown database m" in _refused(sqlite_env, "CREATE TABLE m.t(x)")
    _refused(sqlite_env, host.sql("ATTACH DATABASE '{store}' AS s"))
    assert "no such table: s.episodes" in _refused(sqlite_env, "UPDATE s.episodes SET reward = 1")
    assert "no such table: s.episodes" in _refused(sqlite_env, "SELECT count(*) FROM s.episodes")
    host.assert_untouched()


def test_sqlite_denied_function_inside_a_trigger_is_refused_when_it_would_run(
        sqlite_backend: SqliteBackend, host: Host) -> None:
    # a trigger body needs ';', which ends an action, so this goes through a session directly
    session = sqlite_backend.open_session("network_1", timeout_s=5)
    try:
        session.execute(host.sql(
            "CREATE TRIGGER t AFTER INSERT ON likes BEGIN SELECT load_extension('{dir}/x'); END"))
        with pytest.raises(QueryFailed, match=r"load_extension\(\) is " + NOT_ALLOWED):
            session.execute("INSERT INTO likes VALUES (1, 2)")  # compiling it compiles the body
        assert session.execute("SELECT count(*) FROM likes") == [(10,)]
    finally:
        session.close()
    host.assert_untouched()


def test_sqlite_what_an_episode_needs_still_works(sqlite_env: SqlEnvironment) -> None:
    for sql in ("PRAGMA table_info(likes)", "SELECT name FROM pragma_table_info('likes')",
                "DESC likes", "SHOW TABLES", "BEGIN", "CREATE TEMP TABLE t AS SELECT * FROM likes",
                "CREATE INDEX i ON likes(liked_id)", "ROLLBACK", "ANALYZE",
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5) SELECT sum(x) FROM c",
                "DROP TABLE friend"):
        step = sqlite_env.step(f"execute[{sql}]")
        assert step.ok, (sql, step.observation)
    assert sqlite_env.step(LIKES).observation == "[(10,)]"


def test_sqlite_growth_is_capped_and_the_episode_goes_on(sqlite_env: SqlEnvironment) -> None:
    grow = ("CREATE TABLE big AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
            "LIMIT 200000) SELECT randomblob(1000) AS b FROM c")
    assert _refused(sqlite_env, grow) == "database or disk is full"
    assert _refused(sqlite_env, grow.replace("CREATE TABLE", "CREATE TEMP TABLE")) == "database or disk is full"
    assert _refused(sqlite_env, "SELECT length(zeroblob(2000000))") == "string or blob too big"
    assert sqlite_env.step(LIKES).observation == "[(10,)]"


def test_sqlite_a_refusal_scores_as_any_failed_query(sqlite_env: SqlEnvironment, host: Host) -> None:
    sqlite_env.step(host.sql("execute[ATTACH DATABASE '{store}' AS s]"))
    sqlite_env.step("submit")
    score = sqlite_env.score()
    assert score.reward == 0.0 and score.metrics["failed"] == 1 and score.metrics["error_rate"] == 0.5


def test_replayed_hostile_actions_leave_the_host_and_the_reward_alone(
        sqlite_backend: SqliteBackend, host: Host) -> None:
    actions = [host.sql(f"execute[{sql}]") for sql in SQLITE_HOSTILE.values()]
    env = _open(sqlite_backend)
    replay = {NETWORK_TASK.id: [*actions, f"execute[{NETWORK_TASK.gold}]", "submit"]}
    agent = build_replay(replay, max_turns=len(actions) + 2)
    result = agent.run_sync(NETWORK_TASK.query, llm=ScriptedLLM([]), deps=env)
    score = env.score()
    env.close()
    assert result.exit_state == "End" and score.success
    assert score.metrics["failed"] == len(actions)
    host.assert_untouched()


def test_gold_oracle_scores_every_task_with_the_restrictions_on(sqlite_backend: SqliteBackend) -> None:
    env = SqlEnvironment(backend=sqlite_backend)
    failed = []
    for task in load_tasks():
        env.reset(task.id)
        env.step(f"execute[{task.gold}]")
        env.step("submit")
        if not env.score().success:
            failed.append(task.id)
    env.close()
    assert failed == []


# -- MariaDB: the same intents, through the environment and straight to the server ----------------

MYSQL_HOSTILE = {
    "select into outfile": "SELECT * FROM likes INTO OUTFILE '{dir}/out.txt'",
    "select into dumpfile": "SELECT 1 INTO DUMPFILE '{dir}/dump.bin'",
    "load_file": "SELECT LOAD_FILE('{store}')",
    "load data infile": "LOAD DATA INFILE '{store}' INTO TABLE likes",
    "load data local infile": "LOAD DATA LOCAL INFILE '{store}' INTO TABLE likes",
    "create user": "CREATE USER 'evil'@'%' IDENTIFIED BY 'evil'",
    "grant": "GRANT ALL PRIVILEGES ON *.* TO 'statebound'@'%'",
    "change the password": "SET PASSWORD = PASSWORD('evil')",
    "close the connection": "ROLLBACK RELEASE",
}

# What the server says to each when the client-side refusal is bypassed (the grants alone).
SERVER_REFUSES = {
    "select into outfile": "FILE privilege",
    "select into dumpfile": "FILE privilege",
    "load data infile": "Access denied",
    "load data local infile": "local infile",
    "create user": "CREATE USER privilege",
    "grant": "Access denied",
}


@pytest.fixture
def mysql_env(mysql_backend: MySqlBackend) -> Iterator[SqlEnvironment]:
    env = _open(mysql_backend)
    yield env
    env.close()


@pytest.mark.integration
@pytest.mark.parametrize("template", MYSQL_HOSTILE.values(), ids=MYSQL_HOSTILE.keys())
def test_mysql_hostile_statement_is_refused_and_the_episode_goes_on(
        template: str, mysql_env: SqlEnvironment, host: Host) -> None:
    _assert_refused_and_goes_on(mysql_env, host, template)


@pytest.mark.integration
@pytest.mark.parametrize("name", SERVER_REFUSES)
def test_mysql_server_refuses_without_the_client_check(
        name: str, mysql_backend: MySqlBackend, host: Host) -> None:
    import pymysql

    conn = mysql_backend._connect("network_1")  # the backend's own connection settings
    try:
        with pytest.raises(pymysql.err.MySQLError, match=SERVER_REFUSES[name]):
            conn.cursor().execute(host.sql(MYSQL_HOSTILE[name]))
        cursor = conn.cursor()
        cursor.execute(host.sql("SELECT LOAD_FILE('{store}'), count(*) FROM likes"))
        assert cursor.fetchall() == ((None, 10),)  # no FILE privilege: nothing read
    finally:
        conn.rollback()
        conn.close()
    host.assert_untouched()


@pytest.mark.integration
def test_mysql_a_lost_connection_fails_the_statement_and_the_episode_still_ends(
        mysql_backend: MySqlBackend, mysql_env: SqlEnvironment) -> None:
    thread = mysql_env.step("execute[SELECT CONNECTION_ID()]").observation.strip("[(,)]")
    workspace = mysql_env.step("execute[SELECT DATABASE()]").observation.rsplit("__w", 1)[1].strip("',)]")
    killer = mysql_backend._connect(None, workspace=int(workspace))  # only its own account may kill it
    try:
        killer.cursor().execute(f"KILL {int(thread)}")  # as a server restart or timeout would
    finally:
        killer.close()
    assert not mysql_env.step(LIKES).ok
    mysql_env.step("submit")
    assert mysql_env.score().reward == 0.0
    mysql_env.reset(NETWORK_TASK.id)  # ends the lost episode without raising
    assert mysql_env.step(LIKES).observation == "[(10,)]"


@pytest.mark.integration
def test_mysql_no_database_beyond_the_benchmark_is_reachable(
        mysql_backend: MySqlBackend, mysql_env: SqlEnvironment) -> None:
    import pymysql

    for sql in ("SELECT user, password FROM mysql.user", "USE mysql"):
        assert "denied" in _refused(mysql_env, sql)
    listed = mysql_env.step("execute[SHOW DATABASES]").observation
    assert "mysql" not in listed.replace("information_schema", "") and "network_1" in listed
    assert mysql_env.step(LIKES).observation == "[(10,)]"
    with pytest.raises(pymysql.err.OperationalError, match="Access denied"):
        pymysql.connect(host=mysql_backend.config.host, port=mysql_backend.config.port,
                        user="admin", password="admin")  # the dump's superuser: dropped by start


@pytest.mark.integration
def test_mysql_another_episodes_rows_are_out_of_reach(mysql_backend: MySqlBackend) -> None:
    first, second = _open(mysql_backend), _open(mysql_backend)
    try:
        assert first.step("execute[INSERT INTO likes VALUES (1025, 1247)]").ok
        assert first.step("execute[UPDATE highschooler SET name = 'x' WHERE ID = 1025]").ok
        assert second.step(LIKES).observation == "[(10,)]"  # its own workspace: untouched
        taken = "execute[SELECT name FROM highschooler WHERE ID = 1025 FOR UPDATE NOWAIT]"
        assert second.step(taken).observation == "[('John',)]"  # and not locked by the first
        assert second.step("execute[UPDATE highschooler SET name = 'y' WHERE ID = 1025]").ok
        first.close()  # rolls back
    finally:
        second.close()
    third = _open(mysql_backend)
    assert third.step("execute[SELECT name FROM highschooler WHERE ID = 1025]").observation == "[('John',)]"
    assert third.step(LIKES).observation == "[(10,)]"
    third.close()
