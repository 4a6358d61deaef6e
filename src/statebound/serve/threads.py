"""A served thread read back: its checkpoints folded into the protocol's state, history and status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from statebound.flow.live import Checkpointer
from statebound.flow.live.fold import Folded, fold, snapshots
from statebound.flow.live.records import ThreadRecord
from statebound.serve.db import ServerDB
from statebound.serve.shapes import THREAD_STATUS, state_shape, values

__all__ = ["ThreadNow", "history", "now_of", "status_of"]


@dataclass(frozen=True, slots=True)
class ThreadNow:
    """Where a stored thread stands: its record, its folded checkpoints, its last checkpoint's number."""

    record: ThreadRecord
    folded: Folded
    last_seq: int
    updated: float  # when its last checkpoint was written

    @property
    def pending(self) -> str | None:
        return self.folded.pending if self.folded.kind == "pause" else None

    @property
    def interrupt_id(self) -> str | None:
        return f"{self.record.thread}:{self.last_seq}" if self.pending is not None else None

    def values(self) -> dict[str, Any]:
        return values(self.record, self.folded.stored, self.folded.status, pending=self.pending,
                      interrupt_id=self.interrupt_id)


def now_of(store: Checkpointer, thread: str) -> ThreadNow | None:
    """The thread as stored, or None before its first run wrote anything."""
    record = store.record(thread)
    if record is None:
        return None
    lineage = store.lineage(thread)
    if not lineage:
        return None
    return ThreadNow(record, fold(lineage, record.task), lineage[-1].seq, lineage[-1].created)


def status_of(db: ServerDB, thread: str, now: ThreadNow | None) -> str:
    """The protocol's thread status: busy while a run holds it, else by where it stands."""
    if db.active_runs(thread):
        return "busy"
    if now is None:
        return "idle"
    return THREAD_STATUS.get(now.folded.status, "idle")


def history(store: Checkpointer, thread: str, *, limit: int, before: int | None) -> list[dict[str, Any]]:
    """The thread's states, newest first (``before``: only checkpoints numbered below it)."""
    record = store.record(thread)
    if record is None:
        return []
    lineage = store.lineage(thread)
    states = []
    for index, (checkpoint, snapshot) in enumerate(zip(lineage, snapshots(lineage, record.task))):
        if before is not None and checkpoint.seq >= before:
            break
        final = checkpoint.kind == "end" and checkpoint.status != "error"
        pending = _question(checkpoint) if checkpoint.kind == "pause" else None
        status = "paused" if pending is not None else checkpoint.status
        states.append(state_shape(record, checkpoint, snapshot, status, pending=pending, final=final,
                                  parent=lineage[index - 1] if index else None))
    return states[::-1][:limit]


def _question(checkpoint: Any) -> str | None:
    from statebound.flow.live.codec import decode

    question = decode(checkpoint.body).get("q")
    return question if isinstance(question, str) else None
