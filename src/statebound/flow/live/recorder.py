"""The run hook that writes a thread's checkpoints: after every output function and transition,
one append-only delta (what was added since the last checkpoint, and where the run stands).

Checkpoints of steps that reach nothing outside the run (an :class:`~statebound.flow.Instruction`,
a transition decided by rules, the start) are held back and written in the same commit as the
next one; every checkpoint is committed before the next LLM call or tool starts, so a crash
loses no reply or tool result, and what it may lose is redone the same way on resume.
"""

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

    __slots__ = ("calls", "entries", "held", "machine", "seq", "store", "thread")

    def __init__(self, store: Checkpointer, thread: str, machine: Machine, *, seq: int = 0,
                 entries: int = 0, calls: int = 0) -> None:
        self.store = store
        self.thread = thread
        self.machine = machine
        self.seq = seq
        self.entries = entries
        self.calls = calls
        self.held: list[StoredCheckpoint] = []  # written with the next checkpoint that reaches outside

    def step(self, ctx: RunContext, kind: StepKind) -> None:
        reached_out = len(ctx.calls) > self.calls  # an LLM was called (by an output or a decider)
        body = self._delta(ctx)
        if kind == "intent":
            body["i"] = getattr(self._output(ctx, ctx.step), "name", "tool")
        elif kind == "output":
            reached_out = reached_out or not getattr(self._output(ctx, ctx.step - 1), "pure", False)
        checkpoint = self._checkpoint(ctx, kind, "running", body)
        if reached_out or kind == "intent":
            self.store.append(*self.held, checkpoint)
            self.held.clear()
        else:
            self.held.append(checkpoint)

    def finished(self, ctx: RunContext, result: RunResult) -> None:
        reason = result.exit_reason
        if reason is ExitReason.ERROR:  # a resumed run retries from the last checkpoint: keep only why
            body: dict[str, Any] = {"x": repr_error(result.error)}
        else:
            body = self._delta(ctx)
        if reason is ExitReason.PAUSED:
            body["q"] = result.pending
            last = self._checkpoint(ctx, "pause", "paused", body)
        else:
            last = self._checkpoint(ctx, "end", reason.value, body)
        self.store.append(*self.held, last)
        self.held.clear()

    def _output(self, ctx: RunContext, index: int) -> object:
        return self.machine.states_by_name[ctx.state].outputs[index]

    def _delta(self, ctx: RunContext) -> dict[str, Any]:
        body: dict[str, Any] = {}
        history, calls, state = ctx.history, ctx.calls, ctx.state
        if len(history) > self.entries:
            body["e"] = [encode_entry(entry, state) for entry in history[self.entries:]]
        if len(calls) > self.calls:
            body["c"] = [encode_call(call, state) for call in calls[self.calls:]]
        if ctx.vars_written:  # the flow variables' fields written since the last checkpoint
            body["v"] = dict(ctx.vars_written)
            ctx.vars_written.clear()
        return body

    def _checkpoint(self, ctx: RunContext, kind: CheckpointKind, status: str, body: dict[str, Any]) -> StoredCheckpoint:
        checkpoint = StoredCheckpoint(self.thread, self.seq, kind, ctx.state, ctx.turn, ctx.step, ctx.entered_at,
                                      status, encode(body), time.time())
        self.seq += 1
        self.entries, self.calls = len(ctx.history), len(ctx.calls)
        return checkpoint


def repr_error(error: BaseException | None) -> str:
    return "" if error is None else f"{type(error).__name__}: {error}"
