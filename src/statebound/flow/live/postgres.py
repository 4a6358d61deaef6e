"""The PostgreSQL checkpointer (psycopg 3), for flows served from several machines.

``PostgresCheckpointer("postgresql://user@host:5432/db")`` creates its two tables if missing.
Two processes resuming the same thread cannot both write: the second finds the thread's lease held
and is refused (:class:`~statebound.errors.ThreadTaken`); a lease lives as long as its holder's
database session, so a process killed mid-run holds its thread no more. ``durability="system"``
(the default) and ``"process"`` let a commit return before the server flushes its log
(``synchronous_commit=off``: a server crash may lose the last checkpoints, never damage them);
``"disk"`` waits for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from statebound.errors import CheckpointError
from statebound.flow.live.lease import Lease
from statebound.flow.live.records import StoredCheckpoint, ThreadRecord
from statebound.flow.live.sqlite import Durability
from statebound.flow.live.store import Checkpointer, taken
from statebound.llm.secrets import display_url

__all__ = ["PostgresCheckpointer", "redacted"]

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS statebound_threads (
    thread TEXT PRIMARY KEY, flow TEXT NOT NULL, task TEXT NOT NULL, signature TEXT NOT NULL,
    parent TEXT, parent_seq INTEGER, created DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS statebound_leases (
    thread TEXT PRIMARY KEY, token TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, started TEXT NOT NULL,
    since DOUBLE PRECISION NOT NULL, backend INTEGER NOT NULL, backend_start TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS statebound_checkpoints (
    thread TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, state TEXT NOT NULL,
    turn INTEGER NOT NULL, step INTEGER NOT NULL, entered_at INTEGER NOT NULL, status TEXT, body BYTEA NOT NULL, created DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (thread, seq)
);
"""
_CHECKPOINT_COLUMNS = "thread, seq, kind, state, turn, step, entered_at, status, body, created"
_THREAD_COLUMNS = "thread, flow, task, signature, parent, parent_seq, created"
_LEASE_COLUMNS = "thread, token, host, pid, started, since"
# a lease's holder lives while its database session does (a killed process's session ends with it)
_HOLDER = (f"SELECT {_LEASE_COLUMNS}, EXISTS (SELECT 1 FROM pg_stat_activity AS a WHERE a.pid = l.backend "
           "AND a.backend_start = l.backend_start) FROM statebound_leases AS l WHERE thread = %s FOR UPDATE")


def redacted(url: str) -> str:
    """``url`` without its password (in the user part or a ``?password=``), for messages."""
    parts = urlsplit(url)
    if parts.password is not None:
        host = parts.hostname or ""
        netloc = f"{parts.username}@{host}" + (f":{parts.port}" if parts.port else "")
        url = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return display_url(url)


class PostgresCheckpointer(Checkpointer):
    """Threads and checkpoints in the PostgreSQL database at ``url``."""

    def __init__(self, url: str, *, durability: Durability = "system", connect_timeout: int = 5) -> None:
        try:
            import psycopg
        except ImportError:
            raise CheckpointError(
                "PostgresCheckpointer needs psycopg 3: pip install 'statebound[postgres]'"
            ) from None
        self.where = redacted(url)
        self._errors = psycopg.Error
        self._unique = psycopg.errors.UniqueViolation
        try:
            self._db: Any = psycopg.connect(url, autocommit=True, connect_timeout=connect_timeout)
        except psycopg.Error as exc:
            reason = (str(exc).strip().splitlines() or ["no reason given"])[-1]
            raise CheckpointError(f"cannot connect to PostgreSQL at {self.where}: {reason}") from None
        self._db.execute(f"SET synchronous_commit = {'on' if durability == 'disk' else 'off'}")
        with self._db.transaction():  # processes starting together create the tables once
            self._db.execute("SELECT pg_advisory_xact_lock(hashtext('statebound schema'))")
            self._db.execute(_SCHEMA)
        # this connection's session: a lease taken through it lives as long as the session does
        session = self._db.execute(
            "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()").fetchone()
        if session is None:
            raise CheckpointError(f"PostgreSQL at {self.where} does not show this connection in pg_stat_activity")
        self._session: tuple[int, Any] = (session[0], session[1])

    def _query(self, sql: str, args: tuple[Any, ...], make: Callable[..., T]) -> list[T]:
        try:
            return [make(*row) for row in self._db.execute(sql, args).fetchall()]
        except self._errors as exc:
            raise CheckpointError(f"PostgreSQL at {self.where} failed: {str(exc).strip()}") from None

    def _insert(self, sql: str, rows: list[tuple[Any, ...]], conflict: CheckpointError) -> None:
        try:
            with self._db.transaction(), self._db.cursor() as cursor:
                cursor.executemany(sql, rows)
        except self._unique:
            raise conflict from None
        except self._errors as exc:
            raise CheckpointError(f"cannot write to PostgreSQL at {self.where}: {str(exc).strip()}") from None

    def create_thread(self, record: ThreadRecord) -> None:
        self._insert(f"INSERT INTO statebound_threads ({_THREAD_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                     [(record.thread, record.flow, record.task, record.signature, record.parent,
                       record.parent_seq, record.created)],
                     CheckpointError(f"{self.where} has a thread {record.thread!r} already; pick another name"))

    def record(self, thread: str) -> ThreadRecord | None:
        rows = self._query(f"SELECT {_THREAD_COLUMNS} FROM statebound_threads WHERE thread = %s", (thread,),
                           ThreadRecord)
        return rows[0] if rows else None

    def append(self, *checkpoints: StoredCheckpoint) -> None:
        self._insert(
            f"INSERT INTO statebound_checkpoints ({_CHECKPOINT_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [checkpoint.row() for checkpoint in checkpoints], taken(checkpoints[0]),
        )

    def own_checkpoints(self, thread: str, *, upto: int | None = None) -> list[StoredCheckpoint]:
        sql = (f"SELECT {_CHECKPOINT_COLUMNS} FROM statebound_checkpoints WHERE thread = %s AND seq <= %s "
               "ORDER BY seq")
        return self._query(sql, (thread, 2**31 - 1 if upto is None else upto), StoredCheckpoint.from_row)

    def heads(self) -> list[tuple[ThreadRecord, StoredCheckpoint | None]]:
        records = self._query(f"SELECT {_THREAD_COLUMNS} FROM statebound_threads ORDER BY created, thread", (),
                              ThreadRecord)
        sql = (f"SELECT DISTINCT ON (thread) {_CHECKPOINT_COLUMNS} FROM statebound_checkpoints "
               "ORDER BY thread, seq DESC")
        last = {c.thread: c for c in self._query(sql, (), StoredCheckpoint.from_row)}
        return [(record, last.get(record.thread)) for record in records]

    def remove(self, thread: str) -> None:
        try:
            with self._db.transaction():
                self._db.execute("DELETE FROM statebound_checkpoints WHERE thread = %s", (thread,))
                self._db.execute("DELETE FROM statebound_threads WHERE thread = %s", (thread,))
        except self._errors as exc:
            raise CheckpointError(f"cannot write to PostgreSQL at {self.where}: {str(exc).strip()}") from None

    def claim(self, lease: Lease, *, take_over: str | None = None) -> Lease | None:
        row = (lease.thread, lease.token, lease.host, lease.pid, lease.started, lease.since, *self._session)
        try:
            with self._db.transaction():
                taken = self._db.execute(f"INSERT INTO statebound_leases ({_LEASE_COLUMNS}, backend, backend_start) "
                                         "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (thread) DO NOTHING", row)
                if taken.rowcount == 1:
                    return None
                *held, alive = self._db.execute(_HOLDER, (lease.thread,)).fetchone()
                if alive and held[1] != take_over:
                    return Lease(*held)
                self._db.execute("UPDATE statebound_leases SET token = %s, host = %s, pid = %s, started = %s, "
                                 "since = %s, backend = %s, backend_start = %s WHERE thread = %s", (*row[1:], lease.thread))
                return None
        except self._errors as exc:
            raise CheckpointError(f"cannot write to PostgreSQL at {self.where}: {str(exc).strip()}") from None

    def release(self, lease: Lease) -> None:
        if not self._db.closed:
            self._query("DELETE FROM statebound_leases WHERE thread = %s AND token = %s RETURNING thread",
                        (lease.thread, lease.token), lambda *row: row)

    def close(self) -> None:
        if not self._db.closed:
            self._db.close()

