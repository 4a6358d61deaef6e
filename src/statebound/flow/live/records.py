"""The rows of a checkpoint store, and what listings show of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from statebound.flow.history import Entry

__all__ = ["NOT_STEPS", "CheckpointInfo", "CheckpointKind", "StoredCheckpoint", "ThreadInfo", "ThreadRecord"]

# start/intent/output/transition: steps of a run; pause: it waits for a person; end: it ended
# (status says why); fork: the first checkpoint of a forked thread (with the edit, if any); edit:
# variables set (or an entry edited) in a thread between its runs
CheckpointKind = Literal["start", "intent", "output", "transition", "pause", "end", "fork", "edit"]
NOT_STEPS = ("fork", "edit")  # checkpoints that change what a run knows, not where it stands


@dataclass(frozen=True, slots=True)
class ThreadRecord:
    """A thread as created: its flow's name and signature (JSON), its task and, for a fork, the
    parent thread and the parent's checkpoint it continues from."""

    thread: str
    flow: str
    task: str
    signature: str
    parent: str | None = None
    parent_seq: int | None = None
    created: float = 0.0


@dataclass(frozen=True, slots=True)
class StoredCheckpoint:
    """One row of a thread's log: where the run stands (``state``, ``turn``, ``step``: the next
    output function of the state to run, -1 while the state is still to be entered, and
    ``entered_at``: the history index where the state visit began), ``status`` (``running``,
    ``paused`` or, for an ``end``, the exit reason: ``final``, ``turn_limit``, ``error``, ...) and
    ``body``, the encoded delta (see :mod:`statebound.flow.live.fold`)."""

    thread: str
    seq: int
    kind: CheckpointKind
    state: str
    turn: int
    step: int
    entered_at: int
    status: str
    body: bytes
    created: float

    def row(self) -> tuple[Any, ...]:
        """The stored columns, in order (``running``, the common status, stored as NULL)."""
        status = None if self.status == "running" else self.status
        return (self.thread, self.seq, self.kind, self.state, self.turn, self.step, self.entered_at, status,
                self.body, self.created)

    @classmethod
    def from_row(cls, thread: str, seq: int, kind: Any, state: str, turn: int, step: int, entered_at: int,
                 status: str | None, body: Any, created: float) -> StoredCheckpoint:
        if not isinstance(body, bytes):  # a damaged row: reported when its body is read
            body = bytes(body) if isinstance(body, memoryview) else str(body).encode()
        return cls(thread, seq, kind, state, turn, step, entered_at, status or "running", body, created)


@dataclass(frozen=True, slots=True)
class ThreadInfo:
    """One line of a thread listing: where the thread stands after its last checkpoint."""

    thread: str
    flow: str
    task: str
    state: str
    turn: int
    status: str
    checkpoints: int  # the last checkpoint's number + 1 (a fork counts its parent's too)
    parent: str | None
    updated: float


@dataclass(frozen=True, slots=True)
class CheckpointInfo:
    """One checkpoint of a thread's lineage, for choosing where to fork: ``thread`` is the
    thread that stored it (a fork's first ones are its parent's); ``added`` the entries it added."""

    thread: str
    seq: int
    kind: CheckpointKind
    state: str
    turn: int
    status: str
    added: tuple[Entry, ...]
    created: float
