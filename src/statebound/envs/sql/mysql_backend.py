"""The MySQL-compatible backend (MariaDB or MySQL loaded from the dump as is), faithful to upstream.

Isolation: each episode runs in one transaction that is rolled back at the end, in a workspace of
its own (:mod:`statebound.envs.sql.workspaces`: a copy of the databases that only its account may
read and change), so episodes running at once neither see nor lock one another. Statements that
would commit implicitly (DDL, transaction control, locks) or touch files are refused before they
reach the server (``isolation.mysql_refusal``), because MySQL commits *before* it checks
privileges; so is a statement longer than the server takes in one packet (it would drop the
connection). The client never sends local files (``local_infile`` off) nor several statements at
once. Long statements are stopped by ``max_statement_time`` (MariaDB) or ``MAX_EXECUTION_TIME``
(MySQL). A connection the server dropped says so on every later statement.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from statebound.envs.sql.backend import QueryFailed, Rows
from statebound.envs.sql.budget import DEFAULT_BUDGET, Fetched, ResultBudget, fetch_within
from statebound.envs.sql.isolation import mysql_refusal as refusal_reason
from statebound.envs.sql.workspaces import (
    Workspace,
    lease_workspace,
    workspace_database,
    workspace_user,
)
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
    workspaces: int = field(default_factory=lambda: int(os.environ.get("STATEBOUND_MYSQL_WORKSPACES", "8")))
    """How many workspaces the server has (0: episodes share the databases, and may see and lock
    one another)."""


class MySqlBackend:
    name = "mysql"

    def __init__(self, *, config: MySqlConfig | None = None, databases: Sequence[str] = ()) -> None:
        self.config = config or MySqlConfig()
        self._databases = list(databases)
        self._connect(None).close()  # fail now, with the fix in the message, if unreachable
        for number in sorted({1, self.config.workspaces} - {0}):  # and if the workspaces are missing
            self._connect(None, workspace=number).close()

    def databases(self) -> Sequence[str]:
        return self._databases

    def open_session(self, database: str, *, timeout_s: float,
                     budget: ResultBudget = DEFAULT_BUDGET) -> MySqlSession:
        """A session on a workspace's copy of ``database``, leased for the session's life."""
        if not self.config.workspaces:
            return MySqlSession(self._connect(database), timeout_s, budget)
        workspace = lease_workspace(lambda: self._connect(None), self.config.workspaces)
        try:
            connection = self._connect(workspace_database(database, workspace.number), workspace=workspace.number)
        except BaseException:
            workspace.release()
            raise
        return MySqlSession(connection, timeout_s, budget, workspace=workspace, database=database)

    def pristine_session(self, database: str, *, timeout_s: float,
                         budget: ResultBudget = DEFAULT_BUDGET) -> MySqlSession:
        """A session on ``database`` itself, which no episode changes (each writes its workspace,
        or, without workspaces, rows no other session sees until it commits, which none does)."""
        return MySqlSession(self._connect(database), timeout_s, budget)

    def close(self) -> None:
        return None

    def _connect(self, database: str | None, *, workspace: int | None = None) -> Any:
        try:
            import pymysql
        except ImportError as err:
            raise EnvironmentUnavailable(
                "the MySQL backend needs pymysql: pip install 'statebound[sql]'") from err
        user = self.config.user if workspace is None else workspace_user(self.config.user, workspace)
        try:
            return pymysql.connect(
                host=self.config.host, port=self.config.port, user=user,
                password=self.config.password, database=database, autocommit=False,
                charset="utf8mb4", connect_timeout=5, local_infile=False,
            )
        except pymysql.err.OperationalError as err:
            if workspace is not None and err.args[0] in _ACCESS_DENIED:
                raise EnvironmentUnavailable(
                    f"MySQL/MariaDB at {self.config.host}:{self.config.port} has no episode workspace {workspace} "
                    f"(the account {user!r} cannot log in: {err.args[-1]}). `scripts/mariadb.sh start` makes "
                    f"them (STATEBOUND_MARIADB_WORKSPACES, default 8); STATEBOUND_MYSQL_WORKSPACES=N uses N of "
                    "them, 0 none (episodes then share the databases and may see and lock one another)"
                ) from err
            raise EnvironmentUnavailable(
                f"MySQL/MariaDB is not reachable at {self.config.host}:{self.config.port} as "
                f"{user!r} ({err.args[-1]}). Start the private server with "
                "`scripts/mariadb.sh start`, or point STATEBOUND_MYSQL_HOST/PORT/USER/PASSWORD "
                "at a server loaded from ic_spider_dbs.sql."
            ) from err


_ACCESS_DENIED = (1044, 1045)  # ER_DBACCESS_DENIED_ERROR, ER_ACCESS_DENIED_ERROR
_CONNECTION_LOST = (0, 2006, 2013)  # pymysql's empty error after a drop, gone away, lost during a query


class MySqlSession:
    """One connection, one transaction; ``close`` rolls everything back (and frees the session's
    workspace, when it has one)."""

    def __init__(self, connection: Any, timeout_s: float, budget: ResultBudget = DEFAULT_BUDGET, *,
                 workspace: Workspace | None = None, database: str = "") -> None:
        self._conn = connection
        self._budget = budget
        self._workspace, self._database = workspace, database
        self._lost: str | None = None  # why the server dropped the connection
        self._changed = 0  # rows the episode's statements changed
        cursor = connection.cursor()
        try:  # MariaDB: seconds, any statement; MySQL: milliseconds, SELECT only
            cursor.execute(f"SET SESSION max_statement_time = {float(timeout_s)}")
        except Exception:  # noqa: BLE001 - the variable's name depends on the server
            cursor.execute(f"SET SESSION MAX_EXECUTION_TIME = {int(timeout_s * 1000)}")
        cursor.execute("SET SESSION innodb_lock_wait_timeout = 5")
        cursor.execute("SELECT @@max_allowed_packet")
        self._max_packet = int(cursor.fetchone()[0])
        self._timed_out = 0
        self._time_limit_hit()

    def execute(self, sql: str) -> Rows | None:
        import pymysql
        from pymysql.cursors import SSCursor

        if reason := refusal_reason(sql):
            raise QueryFailed(reason)
        if self._lost is not None:
            raise QueryFailed(f"the server closed this episode's connection earlier ({self._lost}); its changes "
                              "were rolled back and no statement runs any more")
        size = len(sql.encode("utf-8", "surrogateescape"))
        if size + _PACKET_HEADER > self._max_packet:
            raise QueryFailed(f"the statement is {size:,} bytes, more than the server takes in one packet "
                              f"(max_allowed_packet {self._max_packet:,} bytes): not sent")
        try:  # unbuffered: rows are read one at a time, and only as many as the budget allows
            with self._conn.cursor(SSCursor) as cursor:
                cursor.execute(sql)
                rows = None if cursor.description is None else fetch_within(cursor, self._budget)
                self._changed += max(cursor.rowcount, 0) if cursor.description is None else 0
            # closing read and discarded the rest (until the server ends or times the statement
            # out: then the rows kept are still the statement's first ones)
        except pymysql.err.MySQLError as err:
            message = str(err.args[1] if len(err.args) > 1 else err)
            if not self._conn.open or (err.args and err.args[0] in _CONNECTION_LOST):
                self._lost = message or "no reason given"
            raise QueryFailed(self._own_names(message or "the server closed the connection")) from err
        finally:
            timed_out = self._time_limit_hit()
        if timed_out and not (isinstance(rows, Fetched) and rows.cut is not None):
            raise QueryFailed(TIME_LIMIT_MESSAGE)
        return rows

    def changes(self) -> int:
        """Rows inserted, updated or deleted so far (nothing else can change: DDL is refused)."""
        return self._changed

    def _own_names(self, message: str) -> str:
        return message if self._workspace is None else self._workspace.own_names(message, self._database)

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
        try:
            if self._conn.open:  # else lost (killed, timed out): the server rolled it back
                try:
                    self._conn.rollback()
                finally:
                    self._conn.close()
        finally:
            if self._workspace is not None:
                self._workspace.release()


_PACKET_HEADER = 5  # bytes a query packet adds to the statement (length, sequence number, command)
