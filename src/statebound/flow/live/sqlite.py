"""The embedded checkpointer: one SQLite file (the default store of live flows).

Durability is an option; no mode waits for the disk at every step unless asked (write-ahead log):

* ``"system"`` (the default, ``synchronous=NORMAL``): a killed process loses nothing; an
  operating-system crash or a power cut may lose the last checkpoints, never damages the file;
* ``"process"`` (``synchronous=OFF``, the fastest): a killed process loses nothing; an
  operating-system crash or a power cut may damage the file;
* ``"disk"`` (``synchronous=FULL``): every commit waits for the disk (fsync): nothing is lost.

A file that holds another database is refused, saying what it holds, and never written to;
``read_only=True`` opens a store to read it (``statebound threads``) without changing the file.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

from statebound.errors import CheckpointError
from statebound.flow.live.lease import Lease
from statebound.flow.live.records import StoredCheckpoint, ThreadRecord
from statebound.flow.live.store import Checkpointer, taken
from statebound.processes import process_alive
from statebound.sqlite_files import reader

__all__ = ["Durability", "SQLiteCheckpointer"]

Durability = Literal["process", "system", "disk"]
_SYNCHRONOUS = {"process": "OFF", "system": "NORMAL", "disk": "FULL"}
T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    thread TEXT PRIMARY KEY, flow TEXT NOT NULL, task TEXT NOT NULL, signature TEXT NOT NULL,
    parent TEXT, parent_seq INTEGER, created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS leases (
    thread TEXT PRIMARY KEY, token TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,
    started TEXT NOT NULL, since REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checkpoints (
    thread TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, state TEXT NOT NULL,
    turn INTEGER NOT NULL, step INTEGER NOT NULL, entered_at INTEGER NOT NULL, status TEXT,
    body BLOB NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (thread, seq)
) WITHOUT ROWID;
"""
_CHECKPOINT_COLUMNS = "thread, seq, kind, state, turn, step, entered_at, status, body, created"
_THREAD_COLUMNS = "thread, flow, task, signature, parent, parent_seq, created"
_LEASE_COLUMNS = "thread, token, host, pid, started, since"


class SQLiteCheckpointer(Checkpointer):
    """Threads and checkpoints in the SQLite file ``path`` (created if missing, unless
    ``read_only``: then it must be a store, and nothing is written to it)."""

    def __init__(self, path: str | Path, *, durability: Durability = "system", read_only: bool = False) -> None:
        if durability not in _SYNCHRONOUS:
            raise CheckpointError(f"durability must be one of {', '.join(map(repr, _SYNCHRONOUS))}, got {durability!r}")
        self.path = Path(path)
        self.where = str(self.path)
        self.durability = durability
        self.read_only = read_only
        self._db: sqlite3.Connection | None = None
        if read_only and not self.path.is_file():
            raise CheckpointError(f"no checkpoint store at {self.path}; `statebound run FLOW --store PATH --thread ID` "
                                  "makes one")
        self._copy: tempfile.TemporaryDirectory[str] | None = None  # what a reader reads in a read-only place
        with self._reading(None):
            if read_only:  # in a read-only place too, and a killed writer's log with it; the file unchanged
                try:
                    self._db, self._copy = reader(self.path, fold_log=False)
                except sqlite3.DatabaseError as error:
                    if "not a database" not in str(error):
                        raise
                    raise CheckpointError(f"{self.path} is not a checkpoint store: it is not a SQLite database "
                                          f"({error})") from None
            else:
                _make_folder(self.path.parent)
                self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            _refuse_foreign(self._db, self.path, read_only=read_only)
            if not read_only:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(f"PRAGMA synchronous={_SYNCHRONOUS[durability]}")
                self._db.executescript(_SCHEMA)

    @contextmanager
    def _reading(self, thread: str | None) -> Iterator[None]:
        """SQLite's own failures as one line naming the file (and thread)."""
        try:
            yield
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as exc:
            about = f", thread {thread!r}" if thread else ""
            if not self.read_only and not os.access(self.path.parent, os.W_OK):
                raise CheckpointError(f"checkpoint store {self.path}{about} is in a read-only place ({exc}): read it "
                                      "with statebound threads, or store runs where you can write") from None
            raise CheckpointError(
                f"checkpoint store {self.path}{about} cannot be read: {exc} (a damaged or truncated "
                "file, or not a checkpoint store); nothing was written to it"
            ) from None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise CheckpointError(f"checkpoint store {self.path} is closed")
        return self._db

    def _query(self, thread: str | None, sql: str, args: tuple[Any, ...], make: Callable[..., T]) -> list[T]:
        with self._reading(thread):
            return [make(*row) for row in self.db.execute(sql, args)]

    def create_thread(self, record: ThreadRecord) -> None:
        try:
            with self._reading(record.thread):
                self.db.execute(f"INSERT INTO threads ({_THREAD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                                (record.thread, record.flow, record.task, record.signature, record.parent,
                                 record.parent_seq, record.created))
        except sqlite3.IntegrityError:
            raise CheckpointError(f"{self.path} has a thread {record.thread!r} already; pick another name") from None

    def record(self, thread: str) -> ThreadRecord | None:
        rows = self._query(thread, f"SELECT {_THREAD_COLUMNS} FROM threads WHERE thread = ?", (thread,), ThreadRecord)
        return rows[0] if rows else None

    def append(self, *checkpoints: StoredCheckpoint) -> None:
        rows = [value for checkpoint in checkpoints for value in checkpoint.row()]
        try:
            self.db.execute(_insert(len(checkpoints)), rows)  # one statement: one commit
        except sqlite3.IntegrityError:
            raise taken(checkpoints[0]) from None
        except sqlite3.Error as exc:
            raise CheckpointError(f"cannot write to checkpoint store {self.path}: {exc}") from None

    def own_checkpoints(self, thread: str, *, upto: int | None = None) -> list[StoredCheckpoint]:
        sql = f"SELECT {_CHECKPOINT_COLUMNS} FROM checkpoints WHERE thread = ? AND seq <= ? ORDER BY seq"
        return self._query(thread, sql, (thread, 2**62 if upto is None else upto), StoredCheckpoint.from_row)

    def heads(self) -> list[tuple[ThreadRecord, StoredCheckpoint | None]]:
        records = self._query(None, f"SELECT {_THREAD_COLUMNS} FROM threads ORDER BY created, thread", (), ThreadRecord)
        sql = (f"SELECT {_CHECKPOINT_COLUMNS} FROM checkpoints AS c WHERE seq = "
               "(SELECT MAX(seq) FROM checkpoints WHERE thread = c.thread)")
        last = {c.thread: c for c in self._query(None, sql, (), StoredCheckpoint.from_row)}
        return [(record, last.get(record.thread)) for record in records]

    def remove(self, thread: str) -> None:
        with self._reading(thread):
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.execute("DELETE FROM checkpoints WHERE thread = ?", (thread,))
                self.db.execute("DELETE FROM threads WHERE thread = ?", (thread,))
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def claim(self, lease: Lease, *, take_over: str | None = None) -> Lease | None:
        with self._reading(lease.thread):
            db = self.db
            db.execute("BEGIN IMMEDIATE")  # read and take in one transaction: no other writer between
            try:
                row = db.execute(f"SELECT {_LEASE_COLUMNS} FROM leases WHERE thread = ?", (lease.thread,)).fetchone()
                holder = None if row is None else Lease(*row)
                living = holder is not None and (not holder.here() or process_alive(holder.pid, holder.started))
                if holder is not None and living and holder.token != take_over:
                    return holder  # a living run (or one on another host, whose process cannot be seen)
                db.execute(f"INSERT OR REPLACE INTO leases ({_LEASE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                           (lease.thread, lease.token, lease.host, lease.pid, lease.started, lease.since))
                return None
            finally:
                db.execute("COMMIT")

    def release(self, lease: Lease) -> None:
        if self._db is not None:
            with self._reading(lease.thread):
                self._db.execute("DELETE FROM leases WHERE thread = ? AND token = ?", (lease.thread, lease.token))

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        if self._copy is not None:
            self._copy.cleanup()
            self._copy = None


_STORE_TABLES = {"threads", "checkpoints"}


def _refuse_foreign(db: sqlite3.Connection, path: Path, *, read_only: bool) -> None:
    """A :class:`CheckpointError` saying what ``path`` holds when it is not a checkpoint store (an
    empty new file is one to be); the connection is closed first, so nothing is written."""
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as error:
        db.close()
        if "not a database" not in str(error):
            raise  # a damaged store: named as one by the caller
        raise CheckpointError(f"{path} is not a checkpoint store: it is not a SQLite database ({error})") from None
    if _STORE_TABLES <= tables or (not tables and not read_only):
        return
    db.close()
    if {"run", "episodes"} <= tables:
        what = "a run store of statebound eval (statebound report, show and status read it)"
    elif tables:
        shown = sorted(tables)
        what = f"a SQLite database with other tables ({', '.join(shown[:6])}{', ...' if len(shown) > 6 else ''})"
    else:
        what = "an empty SQLite database"
    raise CheckpointError(f"{path} is not a checkpoint store: it is {what}; nothing was written to it. "
                          "Give the file made by statebound run FLOW --store PATH --thread ID")


@functools.lru_cache(maxsize=16)
def _insert(rows: int) -> str:
    return "INSERT INTO checkpoints VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * rows)


def _make_folder(folder: Path) -> None:
    """The store's folder, made when missing (``--store runs/live.sqlite`` in a fresh checkout); a
    folder that cannot be made is named."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CheckpointError(f"cannot make the checkpoint store's folder {folder}: {error.strerror or error}") from None
