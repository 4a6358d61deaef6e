"""What the live-flow pages show, read from a checkpoint store on each request (opened read-only,
``mode=ro``: a flow running on it keeps writing)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from statebound.flow.live import CheckpointInfo, SQLiteCheckpointer, ThreadInfo
from statebound.flow.live.fold import fold, fork_edits
from statebound.flow.live.hints import run_on
from statebound.flow.live.records import ThreadRecord
from statebound.flow.live.session import thread_models

__all__ = ["ThreadView", "read_thread", "read_threads"]


def read_threads(path: Path) -> list[ThreadInfo]:
    with SQLiteCheckpointer(path, read_only=True) as store:
        return store.threads()


@dataclass(frozen=True, slots=True)
class ThreadView:
    """One thread: as created, its checkpoints (a fork's first ones are its parent's), and where
    it stands: its status, the question it waits on when paused, the error it ended with;
    ``edits``: the history entry each checkpoint rewrote (a fork's edit), or ``None``; ``run_on``:
    the command (or call) that runs it on, as it can be pasted."""

    record: ThreadRecord
    checkpoints: list[CheckpointInfo]
    edits: list[tuple[int, str] | None]
    status: str
    pending: str | None
    error: str | None
    run_on: str

    @property
    def first_index(self) -> list[int]:
        """The history index of each checkpoint's first added entry (what ``--edit`` takes)."""
        starts, total = [], 0
        for point in self.checkpoints:
            starts.append(total)
            total += len(point.added)
        return starts


def read_thread(path: Path, thread: str) -> ThreadView | None:
    """The thread ``thread`` of the store, or ``None`` when it has none by that name."""
    with SQLiteCheckpointer(path, read_only=True) as store:
        record = store.record(thread)
        if record is None:
            return None
        points = store.checkpoints(thread)
        lineage = store.lineage(thread)
        folded = fold(lineage, record.task) if points else None
        models = thread_models(store, thread)
    paused = folded is not None and folded.kind == "pause"
    hint = run_on(record, str(path), paused=paused, model=models[-1] if models else None)
    return ThreadView(record, points, fork_edits(lineage), folded.status if folded else "new",
                      folded.pending if folded else None, folded.error if folded else None, hint)
