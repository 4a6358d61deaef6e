"""The run hook that writes a thread's checkpoints: after every output function and transition,
one append-only delta (what was added since the last checkpoint, and where the run stands)."""

from __future__ import annotations

import time
from typing import Any

from statebound.flow.context import RunContext
from statebound.flow.engine import StepKind
from statebound.flow.live.codec import encode, encode_call, encode_entry
from statebound.flow.live.records import CheckpointKind, StoredCheckpoint
from statebound.flow.live.store import Checkpointer
from statebound.flow.machine import Machine
from statebound.flow.result import ExitReason, RunResult

__all__ = ["Recorder"]


class Recorder:
    """Writes the checkpoints of one run of ``thread`` (a :class:`~statebound.flow.engine.RunHook`).

    ``seq`` is the next checkpoint number; ``entries`` and ``calls`` count what is stored already.
    """

    __slots__ = ("calls", "entries", "machine", "seq", "store", "thread")

    def __init__(self, store: Checkpointer, thread: str, machine: Machine, *, seq: int = 0,
                 entries: int = 0, calls: int = 0) -> None:
        self.store = store
        self.thread = thread
        self.machine = machine
        self.seq = seq
        self.entries = entries
        self.calls = calls

    def step(self, ctx: RunContext, kind: StepKind) -> None:
        body = self._delta(ctx)
        if kind == "intent":
            body["i"] = getattr(self.machine.states_by_name[ctx.state].outputs[ctx.step], "name", "tool")
        self._write(ctx, kind, "running", body)

    def finished(self, ctx: RunContext, result: RunResult) -> None:
        reason = result.exit_reason
        if reason is ExitReason.ERROR:  # a resumed run retries from the last checkpoint: keep only why
            body: dict[str, Any] = {"s": ctx.step, "a": ctx.entered_at, "x": repr_error(result.error)}
        else:
            body = self._delta(ctx)
        if reason is ExitReason.PAUSED:
            body["q"] = result.pending
            self._write(ctx, "pause", "paused", body)
        else:
            self._write(ctx, "end", reason.value, body)

    def _delta(self, ctx: RunContext) -> dict[str, Any]:
        body: dict[str, Any] = {"s": ctx.step, "a": ctx.entered_at}
        history, calls = ctx.history, ctx.calls
        if len(history) > self.entries:
            body["e"] = [encode_entry(entry) for entry in history[self.entries:]]
        if len(calls) > self.calls:
            body["c"] = [encode_call(call) for call in calls[self.calls:]]
        return body

    def _write(self, ctx: RunContext, kind: CheckpointKind, status: str, body: dict[str, Any]) -> None:
        self.store.append(StoredCheckpoint(self.thread, self.seq, kind, ctx.state, ctx.turn, status,
                                           encode(body), time.time()))
        self.seq += 1
        self.entries, self.calls = len(ctx.history), len(ctx.calls)


def repr_error(error: BaseException | None) -> str:
    return "" if error is None else f"{type(error).__name__}: {error}"
