"""Running a flow inside a run: a sub-machine (:class:`~statebound.flow.outputs.sub.Sub`) or one
branch of a :class:`~statebound.flow.outputs.parallel.Parallel`.

A child run has an id, its *path* from the run that started it: the state and its visit, then the
child's key (``Research.1/b2``). It is a run of its own (its states, its limits, its variables),
and tells its parent of what it did:

* **checkpoints nest**: when the parent is checkpointed, the child is a thread of the same store
  named ``PARENT-THREAD/PATH``, so every step of it is stored as it happens; the output that runs
  it, run again after a crash or a pause, continues that thread where it stood (a child that
  ended returns its stored result and runs nothing; one cut off inside continues from its last
  checkpoint, asking first before a tool that must not run twice);
* **events** reach the parent's listeners as :class:`ChildEvent`\\ s carrying the child's path, as the
  child takes its steps;
* **budgets**: the child may use no more tokens than the parent has left, nor take more
  transitions than the parent has turns left; its LLM calls become the parent's (under the state
  ``STATE/KEY/CHILD-STATE``) and its transitions count as the parent's turns;
* **pauses** come back as the child's pending question(s), each answered by its id
  (:mod:`statebound.flow.pauses`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import msgspec

from statebound.errors import DefinitionError
from statebound.flow.context import RunContext
from statebound.flow.engine import FlowRun, RunOptions
from statebound.flow.events import StepEvent
from statebound.flow.listeners import Event, RunFinished
from statebound.flow.live.recorder import Recorder
from statebound.flow.live.session import run_thread
from statebound.flow.machine import Machine
from statebound.flow.pauses import Answers, read_listing
from statebound.flow.result import ExitReason, RunResult
from statebound.llm.base import LLM

__all__ = ["ChildEvent", "ChildRun", "absorb", "child_path", "paused_children", "pauses_of", "run_child"]


@dataclass(frozen=True, slots=True)
class ChildEvent:
    """An event of a child run, at ``path`` (``Research.1/b2``; a grandchild's adds its own)."""

    kind: ClassVar[str] = "child_event"
    path: str
    event: StepEvent

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path, "event": self.event.to_dict()}


@dataclass(frozen=True, slots=True)
class ChildRun:
    """One child to run: its ``key`` under the running state, its flow and task, its starting
    variables (a mapping of its fields: used when it starts, not when it continues) and the
    answers to its pauses."""

    key: str
    flow: Machine
    task: str
    vars: Mapping[str, Any] | None = None
    reply: Answers = None


def child_path(ctx: RunContext[Any, Any], key: str) -> str:
    """The id of child ``key`` of the output running in ``ctx``'s state: ``STATE.VISIT/KEY``."""
    return f"{ctx.state}.{ctx.visits.get(ctx.state, 1)}/{key}"


def _stored_at(ctx: RunContext[Any, Any]) -> Recorder | None:
    hook = ctx.hook
    return hook if isinstance(hook, Recorder) else None


def paused_children(ctx: RunContext[Any, Any], paths: list[str]) -> set[str]:
    """Those of ``paths`` (children's ids) whose stored threads wait on a person."""
    recorder = _stored_at(ctx)
    if recorder is None:
        return set()
    waiting = set()
    for path in paths:
        thread = f"{recorder.thread}/{path}"
        if recorder.store.record(thread) is not None:
            own = recorder.store.own_checkpoints(thread)
            if own and own[-1].status == "paused":  # a pause, or a fork or an edit made at one
                waiting.add(path)
    return waiting


def _bounded(ctx: RunContext[Any, Any], flow: Machine) -> Machine:
    """``flow`` held to what the parent has left of its turns and tokens."""
    parent = cast(Machine, ctx.flow)
    turns = max(1, parent.max_turns - ctx.turn)
    changes: dict[str, int] = {}
    if turns < flow.max_turns:
        changes["max_turns"] = turns
    if parent.token_budget is not None:
        left = max(1, parent.token_budget - ctx.usage.total_tokens)
        if flow.token_budget is None or left < flow.token_budget:
            changes["token_budget"] = left
    return flow.replace(**changes) if changes else flow


def _forward(ctx: RunContext[Any, Any], path: str) -> Callable[[Event], Awaitable[None]]:
    """The child's event listener: each of its step events, as the parent's ``ChildEvent``,
    delivered to the parent's listeners as it happens (not when the parent's step ends)."""
    async def forward(event: Event) -> None:
        if isinstance(event, RunFinished):
            return
        nested = ChildEvent(f"{path}/{event.path}", event.event) if isinstance(event, ChildEvent) \
            else ChildEvent(path, event)
        ctx.emit(cast(StepEvent, nested))
        await ctx.deliver()

    return forward


def _llm_of(ctx: RunContext[Any, Any]) -> LLM | None:
    try:
        return ctx.llm_for()
    except DefinitionError:  # no model anywhere: the child may need none
        return None


async def run_child(ctx: RunContext[Any, Any], child: ChildRun) -> RunResult[Any]:
    """Run (or continue) ``child`` of the output running in ``ctx``; its result."""
    path = child_path(ctx, child.key)
    flow = _bounded(ctx, child.flow)
    recorder = _stored_at(ctx)
    new = recorder is None or recorder.store.record(f"{recorder.thread}/{path}") is None
    options: RunOptions[Any] = RunOptions(llm=_llm_of(ctx), deps=ctx.deps, on_event=_forward(ctx, path),
                                          record_events=False, vars=child.vars if new else None)
    if recorder is None:
        if child.reply is not None:
            raise DefinitionError(f"{path} was not stored, so it waits on no answer")
        return await FlowRun(flow, child.task, options).to_end()
    return await run_thread(flow, f"{recorder.thread}/{path}", store=recorder.store, options=options,
                            task=child.task, reply=child.reply)


def absorb(ctx: RunContext[Any, Any], key: str, result: RunResult[Any]) -> None:
    """Count a child's LLM calls and transitions as the parent's (its calls under the state
    ``STATE/KEY/CHILD-STATE``)."""
    where = f"{ctx.state}/{key}"
    ctx.calls.extend(msgspec.structs.replace(call, state=f"{where}/{call.state}") for call in result.calls)
    ctx.turn += result.turns


def pauses_of(path: str, result: RunResult[Any]) -> dict[str, str]:
    """The pauses a paused child waits on, by id (its own listing's ids under ``path``)."""
    if result.exit_reason is not ExitReason.PAUSED:
        return {}
    pending = result.pending or ""
    inner = read_listing(pending)
    if inner is None:
        return {path: pending}
    return {f"{path}/{pause}": question for pause, question in inner.items()}
