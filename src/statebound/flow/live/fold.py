"""Reading a thread back: its checkpoints folded, in order, into where the run stands.

Each checkpoint's row says where the run stands (state, turn, step, entered_at); its body holds
``e`` (new history entries), ``c`` (new LLM calls) and, by kind: ``q`` (a pause's question),
``i`` (the tool of an intent, or of a pause asking about it), ``k`` (the id of the model's call
of that tool, when the model called it), ``o`` (the history index where an output function that
stored progress part-way began), ``x`` (an end's error text), ``v`` (the flow variables' fields
written since the checkpoint before), ``d`` (a fork's edit: index and text, and the entry's data
when the edit re-derived it); an empty body is no bytes at all. An ``end`` that later checkpoints follow (a run that failed, then was resumed)
is skipped: the resumed run went on from the checkpoint before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from statebound.errors import CheckpointError
from statebound.flow.context import Snapshot
from statebound.flow.history import Entry
from statebound.flow.live.codec import decode, decode_call, decode_entry
from statebound.flow.live.records import NOT_STEPS, StoredCheckpoint
from statebound.flow.result import CallRecord

__all__ = ["Folded", "added_entries", "fold", "fork_edits", "snapshots"]


@dataclass(frozen=True, slots=True)
class Folded:
    """A thread read back: ``resume_from`` is where a resumed run continues (before a final
    ``end``); ``stored`` includes what the ``end`` added (the result the run returned)."""

    resume_from: Snapshot
    stored: Snapshot
    kind: str  # the last checkpoint's kind (a fork's: its parent checkpoint's)
    status: str
    pending: str | None  # the question a paused thread waits on
    tool: str | None  # a tool that must not run twice, interrupted mid-call (intent or its pause)
    tool_call: str | None  # the id of the model's call of that tool, when the model called it
    error: str | None
    next_seq: int


class _Fold:
    """The running state of a fold."""

    def __init__(self, task: str) -> None:
        self.task = task
        self.history: list[Entry] = []
        self.calls: list[CallRecord] = []
        self.trajectory: list[str] = []  # the states entered, or about to be
        self.position = ("", 0, -1, 0)  # state, turn, step, entered_at
        self.output_start: int | None = None  # where the output at the position began, if part-way
        self.vars: dict[str, Any] | None = None  # the flow variables' fields, as written so far

    def apply(self, checkpoint: StoredCheckpoint, body: dict[str, Any]) -> None:
        state = checkpoint.state
        self.history.extend(decode_entry(row, state) for row in body.get("e", ()))
        self.calls.extend(decode_call(row, state) for row in body.get("c", ()))
        if "v" in body:
            self.vars = {**(self.vars or {}), **body["v"]}
        if "d" in body:
            index, content, *data = body["d"]
            edited = msgspec.structs.replace(self.history[index], content=content)
            self.history[index] = msgspec.structs.replace(edited, data=data[0]) if data else edited
        if checkpoint.kind in ("start", "transition"):
            self.trajectory.append(checkpoint.state)
        if checkpoint.kind not in NOT_STEPS:
            self.position = (checkpoint.state, checkpoint.turn, checkpoint.step, checkpoint.entered_at)
            self.output_start = body.get("o")

    def snapshot(self) -> Snapshot:
        state, turn, step, entered_at = self.position
        entered = self.trajectory[:-1] if step < 0 else self.trajectory  # the engine enters it
        return Snapshot(self.task, tuple(self.history), tuple(self.calls), tuple(entered), state, turn,
                        step, entered_at, vars=None if self.vars is None else dict(self.vars),
                        output_start=self.output_start)


def _unreadable(checkpoint: StoredCheckpoint, exc: Exception) -> CheckpointError:
    return CheckpointError(
        f"thread {checkpoint.thread!r}, checkpoint {checkpoint.seq} cannot be read "
        f"({type(exc).__name__}: {str(exc)[:120]}); the store is damaged, and nothing was written to it"
    )


def _bodies(checkpoints: Sequence[StoredCheckpoint]) -> list[dict[str, Any]]:
    bodies = []
    for checkpoint in checkpoints:
        try:
            bodies.append(decode(checkpoint.body))
            int(checkpoint.step), int(checkpoint.entered_at)
        except (ValueError, TypeError, KeyError) as exc:
            raise _unreadable(checkpoint, exc) from None
    return bodies


def added_entries(checkpoints: Sequence[StoredCheckpoint]) -> list[tuple[Entry, ...]]:
    """The history entries each checkpoint added."""
    rows = []
    for checkpoint, body in zip(checkpoints, _bodies(checkpoints)):
        try:
            rows.append(tuple(decode_entry(row, checkpoint.state) for row in body.get("e", ())))
        except (ValueError, TypeError, KeyError) as exc:
            raise _unreadable(checkpoint, exc) from None
    return rows


def fork_edits(checkpoints: Sequence[StoredCheckpoint]) -> list[tuple[int, str] | None]:
    """The history entry each checkpoint rewrote (a fork's ``edit``: index and new text), or ``None``."""
    return [(int(body["d"][0]), str(body["d"][1])) if "d" in body else None for body in _bodies(checkpoints)]


def fold(checkpoints: Sequence[StoredCheckpoint], task: str) -> Folded:
    """Where the run of a thread stands after ``checkpoints`` (its whole lineage)."""
    if not checkpoints:
        raise CheckpointError("a thread without checkpoints cannot be resumed; run it from the start")
    bodies = _bodies(checkpoints)
    steps = [i for i, c in enumerate(checkpoints) if c.kind not in NOT_STEPS]
    terminal = steps[-1] if steps else len(checkpoints) - 1
    ended = checkpoints[terminal].kind == "end"
    state, resume = _Fold(task), _Fold(task) if ended else None  # resume: all but a final end
    for i, (checkpoint, body) in enumerate(zip(checkpoints, bodies)):
        if checkpoint.kind == "end" and i != terminal:
            continue
        try:
            state.apply(checkpoint, body)
            if resume is not None and i != terminal:
                resume.apply(checkpoint, body)
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise _unreadable(checkpoint, exc) from None
    resume_from = resume.snapshot() if resume is not None else None
    last, last_body = checkpoints[terminal], bodies[terminal]
    stored = state.snapshot()
    return Folded(
        resume_from=resume_from or stored,
        stored=stored,
        kind=last.kind,
        status=last.status,
        pending=last_body.get("q"),
        tool=last_body.get("i") if last.kind in ("intent", "pause") else None,
        tool_call=last_body.get("k") if last.kind in ("intent", "pause") else None,
        error=last_body.get("x"),
        next_seq=checkpoints[-1].seq + 1,
    )


def snapshots(checkpoints: Sequence[StoredCheckpoint], task: str) -> list[Snapshot]:
    """Where the run stood after each of ``checkpoints`` (a thread's lineage), in one pass: what a
    thread's history shows."""
    state = _Fold(task)
    found = []
    for checkpoint, body in zip(checkpoints, _bodies(checkpoints)):
        try:
            state.apply(checkpoint, body)
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise _unreadable(checkpoint, exc) from None
        found.append(state.snapshot())
    return found
