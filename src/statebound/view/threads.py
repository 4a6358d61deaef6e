"""What the live-flow pages show, read from a checkpoint store on each request (opened read-only,
``mode=ro``: a flow running on it keeps writing)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statebound.flow.live import CheckpointInfo, SQLiteCheckpointer, ThreadInfo
from statebound.flow.live.codec import decode
from statebound.flow.live.fold import fold, fork_edits
from statebound.flow.live.hints import run_on
from statebound.flow.live.records import StoredCheckpoint, ThreadRecord
from statebound.flow.live.session import thread_models
from statebound.view.flowmap import Visits, signature_svg

__all__ = ["ThreadView", "read_thread", "read_threads"]


def read_threads(path: Path) -> list[ThreadInfo]:
    with SQLiteCheckpointer(path, read_only=True) as store:
        return store.threads()


@dataclass(frozen=True, slots=True)
class ThreadView:
    """One thread: as created, its checkpoints (a fork's first ones are its parent's), and where
    it stands: its status, the question it waits on when paused, the error it ended with;
    ``edits``: the history entry each checkpoint rewrote (a fork's edit), or ``None``; ``run_on``:
    the command (or call) that runs it on, as it can be pasted; ``written``:
    the flow variables each checkpoint wrote; ``vars``: the variables where the thread stands
    (``None`` for a flow without them); ``way``: the states entered and transitions taken;
    ``diagram``: the flow's states (as stored with the thread) and those transitions, as SVG."""

    record: ThreadRecord
    checkpoints: list[CheckpointInfo]
    edits: list[tuple[int, str] | None]
    written: list[dict[str, Any]]
    status: str
    pending: str | None
    error: str | None
    run_on: str
    vars: dict[str, Any] | None
    way: Visits
    diagram: str | None

    @property
    def first_index(self) -> list[int]:
        """The history index of each checkpoint's first added entry (what ``--edit`` takes)."""
        starts, total = [], 0
        for point in self.checkpoints:
            starts.append(total)
            total += len(point.added)
        return starts

    @property
    def seconds(self) -> list[float | None]:
        """How long each checkpoint's step took: the time since the checkpoint before (``None``
        for the first, and for a fork's first, made later than its parent's)."""
        times: list[float | None] = [None]
        for before, point in zip(self.checkpoints, self.checkpoints[1:]):
            times.append(None if point.kind == "fork" else max(point.created - before.created, 0.0))
        return times


def _written(lineage: list[StoredCheckpoint]) -> list[dict[str, Any]]:
    """The flow variables each checkpoint wrote (its body's ``v``)."""
    found = []
    for checkpoint in lineage:
        try:
            body = decode(checkpoint.body)
        except (ValueError, TypeError):
            body = {}
        written = body.get("v")
        found.append(dict(written) if isinstance(written, dict) else {})
    return found


def _way(checkpoints: list[CheckpointInfo]) -> Visits:
    """The states the thread entered (a start or a transition checkpoint each) and the moves."""
    entered = [point.state for point in checkpoints if point.kind in ("start", "transition")]
    moves = Counter(zip(entered, entered[1:]))
    return Visits(dict(Counter(entered)), [(source, target, "", count) for (source, target), count in moves.items()])


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
    way = _way(points)
    current = points[-1].state if points else None
    return ThreadView(record, points, fork_edits(lineage), _written(lineage), folded.status if folded else "new",
                      folded.pending if folded else None, folded.error if folded else None, hint,
                      None if folded is None or folded.stored.vars is None else dict(folded.stored.vars), way,
                      signature_svg(record.signature, way, current))
