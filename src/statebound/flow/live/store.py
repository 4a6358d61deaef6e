"""The checkpointer protocol: an append-only log of checkpoints per thread.

A *thread* is one stored run of a flow. Each step of the run appends one *checkpoint*: a small
delta (the new history entries and LLM calls, the state, turn and position), never the whole
history, so the bytes written per step stay the same as the history grows. A fork is a new
thread whose log begins with its parent's, up to a checkpoint (read through, not copied).

Back-ends implement six primitives (:meth:`Checkpointer.create_thread`, :meth:`~Checkpointer.record`,
:meth:`~Checkpointer.append`, :meth:`~Checkpointer.own_checkpoints`, :meth:`~Checkpointer.heads`,
:meth:`~Checkpointer.remove`),
the two of a thread's lease (:meth:`~Checkpointer.claim`, :meth:`~Checkpointer.release`: one run
of a thread at a time, :mod:`statebound.flow.live.lease`) and :meth:`~Checkpointer.close`; listing,
reading a lineage and forking are built on them here (a fork of a child run's thread:
:mod:`statebound.flow.live.nested_forks`). No checkpoint is ever updated (a thread is
deleted only whole, :meth:`Checkpointer.delete`): a damaged store is reported, not repaired.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Self

from statebound.errors import CheckpointError, ThreadTaken
from statebound.flow.live.child_threads import child_of, free_thread_name
from statebound.flow.live.fold import added_entries
from statebound.flow.live.forking import fork_body
from statebound.flow.live.lease import HELD, Lease, refused
from statebound.flow.live.nested_forks import fork_nested
from statebound.flow.live.records import CheckpointInfo, StoredCheckpoint, ThreadInfo, ThreadRecord
from statebound.flow.live.signature import vars_schema

__all__ = ["Checkpointer", "free_thread_name", "taken"]


def taken(checkpoint: StoredCheckpoint) -> ThreadTaken:
    """The error of a write that lost the race for a checkpoint number."""
    return ThreadTaken(
        f"thread {checkpoint.thread!r} has a checkpoint {checkpoint.seq} already: another run of it is "
        "going on (or went on) elsewhere; resume it again to continue from the newest"
    )

class Checkpointer(ABC):
    """Where flows store their threads (see :class:`~statebound.flow.live.SQLiteCheckpointer`,
    :class:`~statebound.flow.live.PostgresCheckpointer`). Use it as a context manager."""

    where: str  # the file or server, for messages (never a password)

    # ---- primitives ----------------------------------------------------------------------
    @abstractmethod
    def create_thread(self, record: ThreadRecord) -> None:
        """Store a new thread; CheckpointError if the name is taken."""

    @abstractmethod
    def record(self, thread: str) -> ThreadRecord | None:
        """The thread as created, or None."""

    @abstractmethod
    def append(self, *checkpoints: StoredCheckpoint) -> None:
        """Add checkpoints, in one commit; CheckpointError if a number is taken (another run of
        the thread wrote first), and then none of them is added."""

    @abstractmethod
    def own_checkpoints(self, thread: str, *, upto: int | None = None) -> list[StoredCheckpoint]:
        """The checkpoints stored under ``thread`` itself (not its parent's), by number."""

    @abstractmethod
    def heads(self) -> list[tuple[ThreadRecord, StoredCheckpoint | None]]:
        """Every thread with its last own checkpoint (None before its first)."""

    @abstractmethod
    def remove(self, thread: str) -> None:
        """Delete ``thread``'s record and its own checkpoints (in one commit)."""

    @abstractmethod
    def claim(self, lease: Lease, *, take_over: str | None = None) -> Lease | None:
        """Take the lease's thread for one run, unless a living run holds it (one whose token is
        not ``take_over``): then that run's lease (and nothing changes). A lease whose holder is
        gone is taken over."""

    @abstractmethod
    def release(self, lease: Lease) -> None:
        """Give the thread back (if ``lease`` still holds it)."""

    @abstractmethod
    def close(self) -> None: ...

    @contextmanager
    def holding(self, thread: str, *, token: str | None = None, take_over: str | None = None) -> Iterator[Lease]:
        """Hold ``thread`` while a run writes into it (as ``token``, else a new name); a
        :class:`~statebound.errors.ThreadTaken` naming the holder when another living run holds
        it, unless that one's token is ``take_over``. Inside a ``holding`` of the same thread and
        store, the lease held is taken as it is."""
        held = HELD.get()
        if (key := (id(self), thread)) in held:
            yield held[key]
            return
        lease = Lease.mine(thread, token)
        holder = self.claim(lease, take_over=take_over)
        if holder is not None:
            raise refused(holder, self.where)
        marker = HELD.set({**held, key: lease})
        try:
            yield lease
        finally:
            HELD.reset(marker)
            try:
                self.release(lease)
            except CheckpointError:  # a full disk, a lost server: the lease ends with this process
                pass

    # ---- built on them --------------------------------------------------------------------
    def lineage(self, thread: str, *, upto: int | None = None) -> list[StoredCheckpoint]:
        """Every checkpoint of ``thread`` from its first (its parents' for a fork), by number,
        checked to be complete."""
        record = self.record(thread)
        if record is None:
            raise CheckpointError(f"{self.where} has no thread {thread!r}; `statebound threads {self.where}` lists them")
        inherited: list[StoredCheckpoint] = []
        first = 0
        if record.parent is not None and record.parent_seq is not None:
            end = record.parent_seq if upto is None else min(upto, record.parent_seq)
            inherited = self.lineage(record.parent, upto=end)
            first = record.parent_seq + 1
        own = self.own_checkpoints(thread, upto=upto)
        for expected, checkpoint in enumerate(own, start=first):
            if checkpoint.seq != expected:
                raise CheckpointError(
                    f"{self.where}: thread {thread!r}, checkpoint {expected} cannot be read: it is "
                    f"missing (the next one stored is {checkpoint.seq}); the store is damaged, and "
                    "nothing was written to it"
                )
        return inherited + own

    def threads(self) -> list[ThreadInfo]:
        """Every thread, where it stands now."""
        infos = []
        for record, last in self.heads():
            infos.append(ThreadInfo(
                thread=record.thread, flow=record.flow, task=record.task,
                state=last.state if last else "", turn=last.turn if last else 0,
                status=last.status if last else "new", checkpoints=last.seq + 1 if last else 0,
                parent=record.parent, updated=last.created if last else record.created,
            ))
        return infos

    def checkpoints(self, thread: str) -> list[CheckpointInfo]:
        """Every checkpoint of ``thread``'s lineage, first to last."""
        lineage = self.lineage(thread)
        return [CheckpointInfo(c.thread, c.seq, c.kind, c.state, c.turn, c.status, added, c.created)
                for c, added in zip(lineage, added_entries(lineage))]

    def fork(self, source: str, *, at: int, thread: str, edit: tuple[int, str] | None = None,
             vars: Mapping[str, Any] | None = None) -> str:  # noqa: A002 - the name users write
        """Start ``thread`` as a copy of ``source`` up to its checkpoint ``at`` (read through, not
        copied), optionally with the history entry at index ``edit[0]`` given the text ``edit[1]``
        (an edited model reply; a reply that wrote a variable or a choice is re-derived, see
        :mod:`statebound.flow.live.forking`) and flow variables set (``vars``: field -> JSON value,
        checked against the thread's variables). Run it on with ``flow.resume(thread, ...)``.

        ``source`` may be a child run's thread (``t1/Research.1/b2``): ``thread`` is then a new
        top-level thread, its parent forked where the child began, that runs the child on from
        ``at`` (:mod:`statebound.flow.live.nested_forks`)."""
        if child_of(source) is not None:
            if "/" in thread:
                raise CheckpointError(f"a fork from {source!r}, a child run's thread, is a new top-level thread: its "
                                      f"name cannot hold '/' ({thread!r}); its children are named under it")
            return fork_nested(self, source, at=at, thread=thread, edit=edit, vars=vars)
        return self.fork_one(source, at=at, thread=thread, edit=edit, vars=vars)

    def fork_one(self, source: str, *, at: int, thread: str, edit: tuple[int, str] | None = None,
                 vars: Mapping[str, Any] | None = None) -> str:  # noqa: A002
        """:meth:`fork` of ``source`` alone, whatever its name: a child's thread forked so is a
        thread of its own, which no parent runs."""
        record, first = self.fork_rows(source, at=at, thread=thread, edit=edit, vars=vars)
        self.create_thread(record)
        self.append(first)
        return thread

    def fork_rows(self, source: str, *, at: int, thread: str, edit: tuple[int, str] | None = None,
                  vars: Mapping[str, Any] | None = None) -> tuple[ThreadRecord, StoredCheckpoint]:  # noqa: A002
        """The thread record and first checkpoint of a fork of ``source`` alone (checked, not written)."""
        lineage = self.lineage(source, upto=at)
        if not lineage or lineage[-1].seq != at:
            last = lineage[-1].seq if lineage else -1
            raise CheckpointError(f"thread {source!r} has no checkpoint {at} (its last is {last})")
        base = lineage[-1]
        record = self.record(source)
        assert record is not None  # lineage() found it
        body = fork_body(lineage, edit, vars or {}, vars_schema(record.signature))
        now = time.time()
        status = "running" if base.kind == "end" and base.status == "error" else base.status
        return (ThreadRecord(thread, record.flow, record.task, record.signature, source, at, now),
                StoredCheckpoint(thread, at + 1, "fork", base.state, base.turn, base.step, base.entered_at,
                                 status, body, now))

    def delete(self, thread: str) -> None:
        """Delete a thread whole (its checkpoints are never changed one by one); refused while a
        run holds it or while forks read through it, naming them."""
        if self.record(thread) is None:
            raise CheckpointError(f"{self.where} has no thread {thread!r}")
        forks = sorted(info.thread for info in self.threads() if info.parent == thread)
        if forks:
            raise CheckpointError(f"thread {thread!r} cannot be deleted: forks read its checkpoints "
                                  f"({', '.join(forks[:5])}{', ...' if len(forks) > 5 else ''}); delete them first")
        with self.holding(thread):
            self.remove(thread)

    def update(self, thread: str, *, vars: Mapping[str, Any] | None = None,  # noqa: A002
               edit: tuple[int, str] | None = None) -> int:
        """Set flow variables (field -> JSON value) or rewrite a history entry in ``thread`` itself,
        between its runs (checked as a fork's are: :mod:`statebound.flow.live.forking`); the run
        that resumes it goes on with them. The number of the ``edit`` checkpoint written."""
        record = self.record(thread)
        if record is None:
            raise CheckpointError(f"{self.where} has no thread {thread!r}")
        with self.holding(thread):  # not while a run writes into it
            lineage = self.lineage(thread)
            if not lineage:
                raise CheckpointError(f"thread {thread!r} has no checkpoint yet: set its variables when starting it")
            body = fork_body(lineage, edit, vars or {}, vars_schema(record.signature))
            last = lineage[-1]
            seq = last.seq + 1
            self.append(StoredCheckpoint(thread, seq, "edit", last.state, last.turn, last.step, last.entered_at,
                                         last.status, body, time.time()))
        return seq

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.where!r})"
