"""The MySQL-compatible backend (MariaDB or MySQL loaded from the dump as is), faithful to upstream.

Isolation: each episode runs in one transaction that is rolled back at the end, as a user that
may only read and change rows (``scripts/mariadb.sh`` grants). Statements that would commit
implicitly (DDL, transaction control, locks) or touch files are refused before they reach the
server (``isolation.mysql_refusal``), because MySQL commits *before* it checks privileges. The
client never sends local files (``local_infile`` off) nor several statements at once. Long
statements are stopped by ``max_statement_time`` (MariaDB) or ``MAX_EXECUTION_TIME`` (MySQL).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from statebound.envs.sql.backend import QueryFailed, Rows
from statebound.envs.sql.budget import DEFAULT_BUDGET, Fetched, ResultBudget, fetch_within
from statebound.envs.sql.isolation import mysql_refusal as refusal_reason
from statebound.errors import EnvironmentUnavailable

__all__ = ["TIME_LIMIT_MESSAGE", "MySqlBackend", "MySqlConfig", "MySqlSession", "refusal_reason"]

TIME_LIMIT_MESSAGE = "Query execution was interrupted (max_statement_time exceeded)"
_TIME_LIMIT_COUNTERS = ("Max_statement_time_exceeded", "Max_execution_time_exceeded")
"""Session status counters of statements stopped by the time limit (MariaDB, MySQL). Some such
statements (``SELECT BENCHMARK(...)``) end with a made-up result (``[(0,)]``) and no error nor
warning; the counter going up is the only sign, so the result is reported as the time limit."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MySqlConfig:
    """Where the server is; defaults match ``scripts/mariadb.sh`` (override with STATEBOUND_MYSQL_*)."""

    host: str = field(default_factory=lambda: os.environ.get("STATEBOUND_MYSQL_HOST", "127.0.0.1"))
    port: int = field(default_factory=lambda: int(os.environ.get("STATEBOUND_MYSQL_PORT", "3407")))
    user: str = field(default_factory=lambda: os.environ.get("STATEBOUND_MYSQL_USER", "statebound"))
    password: str = field(
        default_factory=lambda: os.environ.get("STATEBOUND_MYSQL_PASSWORD", "statebound"))


class MySqlBackend:
    name = "mysql"

    def __init__(self, *, config: MySqlConfig | None = None, databases: Sequence[str] = ()) -> None:
        self.config = config or MySqlConfig()
        self._databases = list(databases)
        self._connect(None).close()  # fail now, with the fix in the message, if unreachable

    def databases(self) -> Sequence[str]:
        return self._databases

    def open_session(self, database: str, *, timeout_s: float,
                     budget: ResultBudget = DEFAULT_BUDGET) -> MySqlSession:
        return MySqlSession(self._connect(database), timeout_s, budget)

    def close(self) -> None:
        return None

    def _connect(self, database: str | None) -> Any:
        try:
            import pymysql
        except ImportError as err:
            raise EnvironmentUnavailable(
                "the MySQL backend needs pymysql: pip install 'statebound[sql]'") from err
        try:
            return pymysql.connect(
                host=self.config.host, port=self.config.port, user=self.config.user,
                password=self.config.password, database=database, autocommit=False,
                charset="utf8mb4", connect_timeout=5, local_infile=False,
            )
        except pymysql.err.OperationalError as err:
            raise EnvironmentUnavailable(
                f"MySQL/MariaDB is not reachable at {self.config.host}:{self.config.port} as "
                f"{self.config.user!r} ({err.args[-1]}). Start the private server with "
                "`scripts/mariadb.sh start`, or point STATEBOUND_MYSQL_HOST/PORT/USER/PASSWORD "
                "at a server loaded from ic_spider_dbs.sql."
            ) from err


class MySqlSession:
    """One connection, one transaction; ``close`` rolls everything back."""

    def __init__(self, connection: Any, timeout_s: float, budget: ResultBudget = DEFAULT_BUDGET) -> None:
        self._conn = connection
        self._budget = budget
        cursor = connection.cursor()
        try:  # MariaDB: seconds, any statement; MySQL: milliseconds, SELECT only
            cursor.execute(f"SET SESSION max_statement_time = {float(timeout_s)}")
        except Exception:  # noqa: BLE001 - the variable's name depends on the server
            cursor.execute(f"SET SESSION MAX_EXECUTION_TIME = {int(timeout_s * 1000)}")
        cursor.execute("SET SESSION innodb_lock_wait_timeout = 5")
        self._timed_out = 0
        self._time_limit_hit()

    def execute(self, sql: str) -> Rows | None:
        import pymysql
        from pymysql.cursors import SSCursor

        if reason := refusal_reason(sql):
            raise QueryFailed(reason)
        try:  # unbuffered: rows are read one at a time, and only as many as the budget allows
            with self._conn.cursor(SSCursor) as cursor:
                cursor.execute(sql)
                rows = None if cursor.description is None else fetch_within(cursor, self._budget)
            # closing read and discarded the rest (until the server ends or times the statement
            # out: then the rows kept are still the statement's first ones)
        except pymysql.err.MySQLError as err:
            message = err.args[1] if len(err.args) > 1 else str(err)
            raise QueryFailed(str(message)) from err
        finally:
            timed_out = self._time_limit_hit()
        if timed_out and not (isinstance(rows, Fetched) and rows.cut is not None):
            raise QueryFailed(TIME_LIMIT_MESSAGE)
        return rows

    def _time_limit_hit(self) -> bool:
        """Whether a statement was stopped by the time limit since this was last asked."""
        if not self._conn.open:
            return False
        with self._conn.cursor() as cursor:
            names = ", ".join(f"'{name}'" for name in _TIME_LIMIT_COUNTERS)
            cursor.execute(f"SHOW SESSION STATUS WHERE Variable_name IN ({names})")
            count = sum(int(value) for _, value in cursor.fetchall())
        hit, self._timed_out = count > self._timed_out, count
        return hit

    def close(self) -> None:
        if not self._conn.open:  # lost (killed, timed out): the server rolled it back
            return
        try:
            self._conn.rollback()
        finally:
            self._conn.close()
