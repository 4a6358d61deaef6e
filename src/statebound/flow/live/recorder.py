"""The run hook that writes a thread's checkpoints: after every output function and transition,
one append-only delta (what was added since the last checkpoint, and where the run stands).

Checkpoints of steps that reach nothing outside the run (an :class:`~statebound.flow.Instruction`,
a transition decided by rules, the start) are held back and written in the same commit as the
next one; every checkpoint is committed before the next LLM call or tool starts, so a crash
loses no reply or tool result, and what it may lose is redone the same way on resume. Within an
output function, its progress is committed as it comes (a model's reply with tool calls before
any call runs, then each call's result), with the history index where the output began (``o``).

A checkpoint number is taken only by a checkpoint that was written: a failed commit (a full disk)
leaves the numbers to the next one, so the thread stays whole and resumable. A commit refused
because another run of the thread wrote that number first means this run lost the thread: it
writes nothing more into it.
"""

from __future__ import annotations

import time
from typing import Any

from statebound.errors import CheckpointError, ThreadTaken
from statebound.flow.context import OutputInfo, RunContext, StepKind, ToolIntent
from statebound.flow.live.codec import encode, encode_call, encode_entry
from statebound.flow.live.records import CheckpointKind, StoredCheckpoint
from statebound.flow.live.store import Checkpointer
from statebound.flow.machine import Machine
from statebound.flow.outputs.call_tool import CallTool
from statebound.flow.result import ExitReason, RunResult

__all__ = ["Recorder"]


class Recorder:
    """Writes the checkpoints of one run of ``thread`` (a :class:`~statebound.flow.engine.RunHook`).

    ``seq`` is the next checkpoint number; ``entries`` and ``calls`` count what is stored already.
    """

    __slots__ = ("calls", "entries", "held", "lost", "machine", "partial", "seq", "store", "thread")

    def __init__(self, store: Checkpointer, thread: str, machine: Machine, *, seq: int = 0,
                 entries: int = 0, calls: int = 0) -> None:
        self.store = store
        self.thread = thread
        self.machine = machine
        self.seq = seq
        self.entries = entries
        self.calls = calls
        self.held: list[StoredCheckpoint] = []  # written with the next checkpoint that reaches outside
        self.partial = False  # the last commit stored progress of the output now running
        self.lost = False  # another run of the thread took a checkpoint number first

    def step(self, ctx: RunContext[Any, Any], kind: StepKind, *, tool: ToolIntent | None = None) -> None:
        changed = len(ctx.history) > self.entries or len(ctx.calls) > self.calls or bool(ctx.vars_written)
        reached_out = len(ctx.calls) > self.calls  # an LLM was called (by an output or a decider)
        body = self._delta(ctx)
        stored: CheckpointKind = "output" if kind == "progress" else kind
        if kind in ("intent", "progress"):
            reached_out = True
            name, call = tool if tool is not None else (None, None)
            if kind == "intent":  # the tool about to run: named by its output, or by the model's call
                body["i"] = name or _intent_name(ctx.output)
            if call is not None:
                body["k"] = call
            if call is not None or kind == "progress":  # where the output began, to go on from its progress
                body["o"] = ctx.output_start
        elif kind == "output":  # after stored progress, an output that added nothing more has nothing to lose
            pure = ctx.output is not None and ctx.output.pure
            reached_out = reached_out or (not pure and (changed or not self.partial))
        self._write(self._checkpoint(ctx, stored, "running", body), commit=reached_out)
        self.partial = kind in ("intent", "progress")

    def finished(self, ctx: RunContext[Any, Any], result: RunResult[Any]) -> None:
        if self.lost:  # the thread is another run's now: leave it as that run writes it
            return
        reason = result.exit_reason
        if reason is ExitReason.ERROR:  # a resumed run retries from the last checkpoint: keep only why
            body: dict[str, Any] = {"x": repr_error(result.error)}
        else:
            body = self._delta(ctx)
        if reason is ExitReason.PAUSED:
            body["q"] = result.pending
            if ctx.step >= 0 and ctx.output_start is not None and self.partial:
                body["o"] = ctx.output_start  # paused part-way: the resumed output goes on from its progress
            last = self._checkpoint(ctx, "pause", "paused", body)
        else:
            last = self._checkpoint(ctx, "end", reason.value, body)
        self._write(last, commit=True)

    def _write(self, checkpoint: StoredCheckpoint, *, commit: bool) -> None:
        """Hold ``checkpoint`` for the next commit, or commit it with those held. A failed commit
        gives its numbers back (the next checkpoint takes them); a number taken by another run of
        the thread marks this run as having lost it."""
        self.held.append(checkpoint)
        if not commit:
            return
        try:
            self.store.append(*self.held)
        except CheckpointError as error:
            self.seq = self.held[0].seq
            self.lost = self.lost or isinstance(error, ThreadTaken)
            raise
        finally:
            self.held.clear()

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


def _intent_name(output: OutputInfo | None) -> str:
    """What the question of a resumed run calls an interrupted output: a tool's name, else its label."""
    if output is None:
        return "tool"
    return output.name if isinstance(output, CallTool) else output.label


def repr_error(error: BaseException | None) -> str:
    return "" if error is None else f"{type(error).__name__}: {error}"
