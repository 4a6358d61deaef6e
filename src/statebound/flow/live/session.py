"""Running a flow as a stored thread: start it, continue it after a crash, answer its pause.

* a new thread stores every step (:class:`~statebound.flow.live.recorder.Recorder`);
* a stored thread continues at the exact point its last checkpoint names: an output function
  whose result was stored is never run again (an LLM reply is never asked for twice), one that
  was interrupted mid-call runs again, from the progress it stored (a model's reply with tool
  calls is not asked for again, a call whose result is stored is not made again); a tool
  declared not repeatable (``CallTool(fn, repeatable=False)``, ``tool(fn, repeatable=False)``
  offered to the model) that was interrupted makes the run pause and ask (answer ``repeat`` or
  ``skip``);
* a paused thread continues with the person's answer; a finished one returns its result.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from statebound.errors import CheckpointError
from statebound.flow.context import RunContext, Snapshot
from statebound.flow.engine import FlowRun, RunOptions, result_of
from statebound.flow.history import Entry
from statebound.flow.live.codec import encode
from statebound.flow.live.fold import Folded, fold
from statebound.flow.live.recorder import Recorder
from statebound.flow.live.records import StoredCheckpoint, ThreadRecord
from statebound.flow.live.signature import differences, signature
from statebound.flow.live.store import Checkpointer
from statebound.flow.machine import Machine
from statebound.flow.pauses import Answers, misfit
from statebound.flow.result import ExitReason, RunResult
from statebound.flow.tool_calls import call_record, calls_in_progress

__all__ = ["REPEAT", "SKIP", "run_thread", "thread_models"]

REPEAT, SKIP = "repeat", "skip"  # the answers to "a tool that must not run twice was interrupted"


async def run_thread(machine: Machine, thread: str, *, store: Checkpointer, options: RunOptions[Any],
                     task: str | None = None, reply: Answers = None) -> RunResult[Any]:
    """Run ``thread``: a new one from the start on ``task``, a stored one from its last
    checkpoint (``task``, if given, must be the one it started with; ``reply`` answers a pause)."""
    record = store.record(thread)
    if record is None:
        if task is None:
            raise CheckpointError(
                f"{store.where} has no thread {thread!r}; start it with flow.run(task, checkpointer=..., "
                f"thread={thread!r})"
            )
        store.create_thread(ThreadRecord(thread, machine.name, task, signature(machine), created=time.time()))
        with store.holding(thread):
            return await FlowRun(machine, task, options, hook=Recorder(store, thread, machine)).to_end()
    if task is not None and record.task != task:
        raise CheckpointError(
            f"thread {thread!r} was started with another task ({record.task[:80]!r}); continue it "
            f"with flow.resume({thread!r}, ...) or give this task a new thread name"
        )
    with store.holding(thread):  # one run writes into a thread at a time
        return await _continue(machine, record, store=store, reply=reply, options=options)


def thread_models(store: Checkpointer, thread: str) -> tuple[str, ...]:
    """The models ``thread``'s LLM calls used so far, in the order first used."""
    lineage = store.lineage(thread)
    if not lineage:
        return ()
    return tuple(dict.fromkeys(call.model for call in fold(lineage, "").stored.calls))


async def _continue(machine: Machine, record: ThreadRecord, *, store: Checkpointer, reply: Answers,
                    options: RunOptions[Any]) -> RunResult[Any]:
    thread = record.thread
    changed = differences(record.signature, machine)
    if changed:
        raise CheckpointError(
            f"thread {thread!r} was stored by a different flow ({'; '.join(changed)}); resume it "
            "with the flow it was started with, or start a new thread"
        )
    lineage = store.lineage(thread)
    if not lineage:  # it died before its first commit, so nothing it did reached outside
        if reply is not None:
            raise CheckpointError(f"thread {thread!r} waits for no input (it has no checkpoint yet)")
        return await FlowRun(machine, record.task, options, hook=Recorder(store, thread, machine)).to_end()
    folded = fold(lineage, record.task)
    waiting = folded.kind == "pause"
    if reply is not None and not waiting:
        raise CheckpointError(f"thread {thread!r} waits for no input (it is {folded.status}); resume it without input")
    if folded.kind == "end" and folded.status != ExitReason.ERROR.value:
        return _stored_result(machine, folded)
    if folded.kind == "intent" or (waiting and reply is None):
        return _ask(machine, store, thread, folded)
    if waiting and reply is not None and (wrong := misfit(folded.pending or "", reply)) is not None:
        raise CheckpointError(f"thread {thread!r}: {wrong}")
    snapshot = folded.resume_from
    if waiting and reply is not None:  # (waiting without a reply was answered above)
        snapshot = dataclasses.replace(snapshot, reply=reply) if folded.tool is None else \
            _after_interrupted_tool(snapshot, folded.tool, folded.tool_call, reply)
    recorder = Recorder(store, thread, machine, seq=folded.next_seq,
                        entries=len(folded.resume_from.history), calls=len(snapshot.calls))
    return await FlowRun(machine, record.task, options, hook=recorder, snapshot=snapshot).to_end()


def _context(machine: Machine, snapshot: Snapshot) -> RunContext[Any]:
    ctx: RunContext[Any, Any] = RunContext(flow=machine, task=snapshot.task, deps=None, llm=None, emit=None,
                     cost=lambda model, usage: None)
    ctx.restore(snapshot)
    return ctx


def _entered(snapshot: Snapshot, reason: ExitReason) -> tuple[str, ...]:
    """The states a stopped run entered: a run that stopped at a state's door entered it only when
    it was final (a visit or turn limit keeps the run out)."""
    at_the_door = snapshot.step < 0
    return (*snapshot.trajectory, snapshot.state) if at_the_door and reason is ExitReason.FINAL else snapshot.trajectory


def _stored_result(machine: Machine, folded: Folded) -> RunResult[Any]:
    """The result a finished thread's run returned, read back (nothing runs)."""
    snapshot = folded.stored
    reason = ExitReason(folded.status)
    return result_of(_context(machine, snapshot), _entered(snapshot, reason), reason)


def _ask(machine: Machine, store: Checkpointer, thread: str, folded: Folded) -> RunResult[Any]:
    """The paused result of a thread that waits for a person, storing the question if it is new."""
    snapshot = folded.resume_from
    question = folded.pending
    if folded.kind == "intent":  # a tool that must not run twice was interrupted: ask first
        question = (
            f"tool {folded.tool!r} was interrupted while it ran and is not safe to run twice: answer "
            f"{REPEAT!r} to run it again or {SKIP!r} to go on as if it failed"
        )
        asked = {"q": question, "i": folded.tool, "k": folded.tool_call, "o": snapshot.output_start}
        body = encode({key: value for key, value in asked.items() if value is not None})
        store.append(StoredCheckpoint(thread, folded.next_seq, "pause", snapshot.state, snapshot.turn,
                                      snapshot.step, snapshot.entered_at, "paused", body, time.time()))
    return result_of(_context(machine, snapshot), _entered(snapshot, ExitReason.PAUSED), ExitReason.PAUSED,
                            pending=question)


def _after_interrupted_tool(snapshot: Snapshot, tool: str, call: str | None, reply: Answers) -> Snapshot:
    """``repeat``: run it again; ``skip``: go on as if it failed (a ``CallTool``'s output is
    passed; a call the model made gets a failed result, and its reply's other calls go on)."""
    answer = reply.strip().lower() if isinstance(reply, str) else None
    if answer == REPEAT:
        return snapshot
    if answer != SKIP:
        raise CheckpointError(f"answer {REPEAT!r} or {SKIP!r} about the interrupted tool {tool!r}, not {reply!r}")
    text = f"{tool} was interrupted and not run again"
    if snapshot.output_start is None:
        failed = Entry("tool", text, snapshot.state, "tool", tool, False)
        return dataclasses.replace(snapshot, history=(*snapshot.history, failed), step=snapshot.step + 1)
    progress = calls_in_progress(snapshot.history, snapshot.output_start)
    if progress is None or progress[1] >= len(progress[0]):
        raise CheckpointError(f"the interrupted call {call or tool!r} is not among the calls of the reply the thread "
                              "stored; the store is damaged")
    calls, done = progress
    failed = Entry("tool", f"Error: {text}", snapshot.state, "tool", tool, False, data=call_record(calls[done]))
    return dataclasses.replace(snapshot, history=(*snapshot.history, failed))
