"""Live flows: checkpoints after every step, resume after a crash, pauses for a person, forks.

``flow.run(task, checkpointer=SQLiteCheckpointer("runs.db"), thread="t1")`` stores the run;
running ``t1`` again (or ``flow.resume("t1", ...)``) continues it from its last checkpoint.
``store.threads()`` lists threads, ``store.checkpoints("t1")`` a thread's checkpoints,
``store.fork("t1", at=5, thread="t2", edit=(3, "..."))`` starts a new thread from one of them (from
a child run's checkpoint too: ``store.fork("t1/Research.1/b2", at=5, thread="t2")``).
See ``docs/live-flows.md``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from statebound.errors import CheckpointError
from statebound.flow.live.child_threads import fork_name
from statebound.flow.live.postgres import PostgresCheckpointer
from statebound.flow.live.records import CheckpointInfo, StoredCheckpoint, ThreadInfo
from statebound.flow.live.sqlite import Durability, SQLiteCheckpointer
from statebound.flow.live.store import Checkpointer

__all__ = [
    "CheckpointInfo",
    "Checkpointer",
    "Durability",
    "PostgresCheckpointer",
    "SQLiteCheckpointer",
    "StoredCheckpoint",
    "ThreadInfo",
    "fork_thread",
    "missing_thread",
    "open_checkpointer",
    "refuse_connection_string",
]

# "host=db password=x", "dbname = app": libpq key=value pairs, which no store path looks like
_CONNECTION_STRING = re.compile(r"^\s*[A-Za-z_]+\s*=\s*\S")


def open_checkpointer(where: str, *, durability: Durability = "system", read_only: bool = False) -> Checkpointer:
    """A PostgreSQL URL (``postgresql://...``) or the path of a SQLite file (``read_only``: an
    existing store, opened without writing to it)."""
    if where.startswith(("postgresql://", "postgres://")):
        return PostgresCheckpointer(where, durability=durability)
    refuse_connection_string(where)
    return SQLiteCheckpointer(where, durability=durability, read_only=read_only)


def refuse_connection_string(where: str) -> None:
    """A :class:`CheckpointError` (not echoing it) when ``where`` is a libpq connection string:
    taken for a SQLite path it would make a file whose name holds the password."""
    if _CONNECTION_STRING.match(where):
        raise CheckpointError(
            "the store looks like a libpq connection string (key=value ...), not a file path; "
            "give a postgresql://USER@HOST/DB URL (the password in $PGPASSWORD or ~/.pgpass) or "
            "the path of a SQLite file"
        )


def fork_thread(where: str, thread: str, *, at: int, edit: tuple[int, str] | None = None,
                name: str | None = None, sets: Mapping[str, Any] | None = None) -> str:
    """A new thread in the store at ``where`` from ``thread``'s checkpoint ``at`` (``edit``: a
    history entry's index and new text; ``sets``: flow variables, field -> JSON value), named
    ``name`` or ``THREAD-at-SEQ`` (``-2``, ... when taken); its name. A child run's thread is
    forked as a new top-level thread that runs on inside the child (``Checkpointer.fork``), named
    ``TOP-at-PATH-SEQ`` by default. A :class:`CheckpointError` says what is wrong, and then
    nothing is written."""
    with open_checkpointer(where, read_only=True) as reader:  # a foreign file is refused unchanged
        if reader.record(thread) is None:
            raise CheckpointError(missing_thread(reader, thread))
        names = {info.thread for info in reader.threads()}
    with open_checkpointer(where) as store:
        return store.fork(thread, at=at, thread=name or fork_name(thread, at, names), edit=edit, vars=sets)


def missing_thread(store: Checkpointer, thread: str) -> str:
    """``STORE has no thread 'x'; its threads: a, b``."""
    names = [info.thread for info in store.threads()]
    listed = f"its threads: {', '.join(names[:10])}{', ...' if len(names) > 10 else ''}" if names else "it holds no thread yet"
    return f"{store.where} has no thread {thread!r}; {listed}"
