"""The server's own tables, beside the checkpointer's in the same database: runs (what was asked,
where it stands, which worker holds it and until when), the threads' metadata, and each run's
events (what a stream that reconnects reads again).

One small interface over SQLite (one process) and PostgreSQL (several workers): parameters are
written ``?`` and made ``%s`` for psycopg; a run is claimed in one transaction, by a conditional
update on SQLite (one writer at a time) and ``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so two
workers never take the same run.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from statebound.errors import CheckpointError

__all__ = ["RunRow", "ServerDB", "open_server_db"]

_TABLES = """
CREATE TABLE IF NOT EXISTS statebound_server_threads (
    thread TEXT PRIMARY KEY, metadata TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS statebound_runs (
    run_id TEXT PRIMARY KEY, thread TEXT NOT NULL, assistant TEXT NOT NULL, status TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL, updated DOUBLE PRECISION NOT NULL, metadata TEXT NOT NULL, request TEXT NOT NULL,
    multitask TEXT NOT NULL, worker TEXT, lease_until DOUBLE PRECISION NOT NULL, start_seq INTEGER NOT NULL,
    cancel TEXT, error TEXT
);
CREATE INDEX IF NOT EXISTS statebound_runs_by_thread ON statebound_runs (thread, created);
CREATE INDEX IF NOT EXISTS statebound_runs_waiting ON statebound_runs (status, lease_until);
CREATE TABLE IF NOT EXISTS statebound_run_events (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, event TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
"""
_RUN_COLUMNS = ("run_id, thread, assistant, status, created, updated, metadata, request, multitask, worker, "
                "lease_until, start_seq, cancel, error")
ACTIVE = ("pending", "running")  # a run in one of these holds its thread


@dataclass(frozen=True, slots=True)
class RunRow:
    """A run as stored: ``request`` holds what was asked (input, command, stream modes...),
    ``start_seq`` the thread's last checkpoint when the run was accepted (-1: none yet), ``cancel``
    the action a cancel asked for (``interrupt`` or ``rollback``), ``error`` why it failed."""

    run_id: str
    thread: str
    assistant: str
    status: str
    created: float
    updated: float
    metadata: dict[str, Any]
    request: dict[str, Any]
    multitask: str
    worker: str | None
    lease_until: float
    start_seq: int
    cancel: str | None
    error: str | None

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> RunRow:
        values = list(row)
        values[6], values[7] = orjson.loads(values[6]), orjson.loads(values[7])
        return cls(*values)


class ServerDB:
    """The server's tables in the database at ``where`` (a SQLite file or a postgresql:// URL)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.postgres = where.startswith(("postgresql://", "postgres://"))
        self._lock = threading.Lock()  # one statement at a time on the connection
        if self.postgres:
            import psycopg

            self._errors: tuple[type[BaseException], ...] = (psycopg.Error,)
            self._db: Any = psycopg.connect(where, autocommit=True)
            with self._db.transaction():  # workers starting together create the tables once
                self._db.execute("SELECT pg_advisory_xact_lock(hashtext('statebound schema'))")
                for statement in filter(str.strip, _TABLES.split(";")):
                    self._db.execute(statement)
                self._widen_times()
        else:
            self._errors = (sqlite3.Error,)
            self._db = sqlite3.connect(Path(where), isolation_level=None, check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_TABLES)

    def _widen_times(self) -> None:
        """Tables made before the times were DOUBLE PRECISION held them as PostgreSQL's REAL, four
        bytes: a time to within 128 seconds, so a 10 s lease could run out at once or last minutes."""
        narrow = self._db.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name IN ('statebound_runs', 'statebound_server_threads') AND data_type = 'real'").fetchall()
        for table, column in narrow:
            self._db.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE DOUBLE PRECISION")

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.postgres else sql

    def execute(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                cursor = self._db.execute(self._sql(sql), tuple(args))
                return list(cursor.fetchall()) if cursor.description else []
            except self._errors as error:
                raise CheckpointError(f"the server's tables in {self._shown()} failed: {str(error).strip()}") from None


    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Statements in one transaction (SQLite: taken for writing at once)."""
        with self._lock:
            try:
                if self.postgres:
                    with self._db.transaction():
                        yield
                else:
                    self._db.execute("BEGIN IMMEDIATE")
                    try:
                        yield
                    except BaseException:
                        self._db.execute("ROLLBACK")
                        raise
                    self._db.execute("COMMIT")
            except self._errors as error:
                raise CheckpointError(f"the server's tables in {self._shown()} failed: {str(error).strip()}") from None

    def in_transaction(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """A statement inside :meth:`transaction` (the lock is held already)."""
        cursor = self._db.execute(self._sql(sql), tuple(args))
        return list(cursor.fetchall()) if cursor.description else []

    def _shown(self) -> str:
        from statebound.flow.live.postgres import redacted

        return redacted(self.where) if self.postgres else self.where

    # ---- threads ---------------------------------------------------------------------------
    def add_thread(self, thread: str, metadata: dict[str, Any], now: float) -> bool:
        """Store a thread's metadata; False when it exists already."""
        with self.transaction():
            if self.in_transaction("SELECT 1 FROM statebound_server_threads WHERE thread = ?", (thread,)):
                return False
            self.in_transaction("INSERT INTO statebound_server_threads VALUES (?, ?, ?, ?)",
                                (thread, orjson.dumps(metadata).decode(), now, now))
        return True

    def thread_rows(self, thread: str | None = None) -> dict[str, tuple[dict[str, Any], float, float]]:
        """Threads' metadata, created and updated times (all, or ``thread``'s)."""
        sql = "SELECT thread, metadata, created, updated FROM statebound_server_threads"
        rows = self.execute(sql + " WHERE thread = ?", (thread,)) if thread is not None else self.execute(sql)
        return {row[0]: (orjson.loads(row[1]), row[2], row[3]) for row in rows}

    def update_thread(self, thread: str, metadata: dict[str, Any], now: float) -> None:
        self.execute("UPDATE statebound_server_threads SET metadata = ?, updated = ? WHERE thread = ?",
                     (orjson.dumps(metadata).decode(), now, thread))

    def touch_thread(self, thread: str, now: float) -> None:
        self.execute("UPDATE statebound_server_threads SET updated = ? WHERE thread = ?", (now, thread))

    def delete_thread(self, thread: str) -> None:
        with self.transaction():
            for table in ("statebound_server_threads",):
                self.in_transaction(f"DELETE FROM {table} WHERE thread = ?", (thread,))
            self.in_transaction("DELETE FROM statebound_run_events WHERE run_id IN "
                                "(SELECT run_id FROM statebound_runs WHERE thread = ?)", (thread,))
            self.in_transaction("DELETE FROM statebound_runs WHERE thread = ?", (thread,))

    # ---- runs ------------------------------------------------------------------------------
    def insert_run(self, run: RunRow) -> None:
        self.in_transaction(f"INSERT INTO statebound_runs ({_RUN_COLUMNS}) VALUES ({', '.join('?' * 14)})",
                            _values(run))

    def run(self, run_id: str) -> RunRow | None:
        rows = self.execute(f"SELECT {_RUN_COLUMNS} FROM statebound_runs WHERE run_id = ?", (run_id,))
        return RunRow.from_row(rows[0]) if rows else None

    def runs_of(self, thread: str, *, limit: int = 10, offset: int = 0, status: str | None = None) -> list[RunRow]:
        where, args = "thread = ?", [thread]
        if status is not None:
            where, args = where + " AND status = ?", [*args, status]
        rows = self.execute(f"SELECT {_RUN_COLUMNS} FROM statebound_runs WHERE {where} ORDER BY created DESC "
                            "LIMIT ? OFFSET ?", (*args, limit, offset))
        return [RunRow.from_row(row) for row in rows]

    def active_runs(self, thread: str, *, locked: bool = False) -> list[RunRow]:
        """The thread's pending or running runs, oldest first (``locked``: inside a transaction)."""
        sql = (f"SELECT {_RUN_COLUMNS} FROM statebound_runs WHERE thread = ? AND status IN (?, ?) "
               "ORDER BY created")
        rows = (self.in_transaction if locked else self.execute)(sql, (thread, *ACTIVE))
        return [RunRow.from_row(row) for row in rows]

    def set_run(self, run_id: str, now: float, *, holder: str | None = None, **fields: Any) -> None:
        """Write fields of a run (``holder``: only while that worker holds it)."""
        assigns = ", ".join(f"{name} = ?" for name in fields)
        guard, extra = (" AND worker = ?", (holder,)) if holder is not None else ("", ())
        self.execute(f"UPDATE statebound_runs SET {assigns}, updated = ? WHERE run_id = ?{guard}",
                     (*(_stored(value) for value in fields.values()), now, run_id, *extra))

    def claim(self, worker: str, now: float, lease: float, *, run_id: str | None = None) -> RunRow | None:
        """Take one run for ``worker`` until ``now + lease``: ``run_id`` if given and free, else
        the oldest pending run whose thread no other run holds, or a running one whose holder's
        lease ran out. None when there is none."""
        skip = " FOR UPDATE SKIP LOCKED" if self.postgres else ""
        claimable = ("((r.status = 'running' AND r.lease_until < ?) OR (r.status = 'pending' AND NOT EXISTS "
                     "(SELECT 1 FROM statebound_runs AS o WHERE o.thread = r.thread AND o.status = 'running' "
                     "AND o.lease_until >= ?) AND NOT EXISTS (SELECT 1 FROM statebound_runs AS e WHERE "
                     "e.thread = r.thread AND e.status = 'pending' AND e.created < r.created)))")
        with self.transaction():
            if run_id is not None:
                rows = self.in_transaction(f"SELECT {_RUN_COLUMNS} FROM statebound_runs AS r WHERE r.run_id = ? "
                                           f"AND {claimable}{skip}", (run_id, now, now))
            else:
                rows = self.in_transaction(f"SELECT {_RUN_COLUMNS} FROM statebound_runs AS r WHERE {claimable} "
                                           f"ORDER BY r.created LIMIT 1{skip}", (now, now))
            if not rows:
                return None
            run = RunRow.from_row(rows[0])
            self.in_transaction("UPDATE statebound_runs SET status = 'running', worker = ?, lease_until = ?, "
                                "updated = ? WHERE run_id = ?", (worker, now + lease, now, run.run_id))
        return run

    def renew(self, worker: str, run_ids: Sequence[str], until: float) -> dict[str, str | None]:
        """Extend ``worker``'s leases on ``run_ids``: each run it still holds, with its cancel
        request (None: none); a run left out went to another worker (its lease had run out)."""
        if not run_ids:
            return {}
        marks = ", ".join("?" * len(run_ids))
        self.execute(f"UPDATE statebound_runs SET lease_until = ? WHERE worker = ? AND status = 'running' AND "
                     f"run_id IN ({marks})", (until, worker, *run_ids))
        rows = self.execute(f"SELECT run_id, cancel FROM statebound_runs WHERE worker = ? AND run_id IN ({marks})",
                            (worker, *run_ids))
        return {row[0]: row[1] for row in rows}

    def workers_running(self) -> list[str]:
        """The workers that hold running runs."""
        return [row[0] for row in self.execute("SELECT DISTINCT worker FROM statebound_runs WHERE status = 'running' "
                                               "AND worker IS NOT NULL")]

    def expire(self, worker: str) -> None:
        """End ``worker``'s leases now (it is gone)."""
        self.execute("UPDATE statebound_runs SET lease_until = 0 WHERE worker = ? AND status = 'running'", (worker,))

    # ---- events ----------------------------------------------------------------------------
    def add_events(self, run_id: str, events: Sequence[tuple[int, str, str]]) -> None:
        """Store events, in one statement (psycopg's executemany pipelines, which hung servers)."""
        if events:
            rows = ", ".join(["(?, ?, ?, ?)"] * len(events))
            self.execute(f"INSERT INTO statebound_run_events VALUES {rows}",
                         [value for seq, event, data in events for value in (run_id, seq, event, data)])

    def events_after(self, run_id: str, after: int) -> list[tuple[int, str, str]]:
        rows = self.execute("SELECT seq, event, data FROM statebound_run_events WHERE run_id = ? AND seq > ? "
                            "ORDER BY seq", (run_id, after))
        return [(row[0], row[1], row[2]) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _stored(value: Any) -> Any:
    return orjson.dumps(value).decode() if isinstance(value, dict) else value


def _values(run: RunRow) -> tuple[Any, ...]:
    return (run.run_id, run.thread, run.assistant, run.status, run.created, run.updated,
            orjson.dumps(run.metadata).decode(), orjson.dumps(run.request).decode(), run.multitask, run.worker,
            run.lease_until, run.start_seq, run.cancel, run.error)


def open_server_db(where: str) -> ServerDB:
    return ServerDB(where)
