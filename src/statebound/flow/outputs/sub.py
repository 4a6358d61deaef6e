"""The output function that runs another flow inside a state: ``Sub(flow, vars_in=, vars_out=)``.

The child flow runs with its own states, limits and variables; ``vars_in`` starts its variables
from the parent's, ``vars_out`` writes its results into the parent's (they are the output's
``writes``). How it runs, stores its checkpoints, reports events and pauses:
:mod:`statebound.flow.nested`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from statebound.errors import DefinitionError
from statebound.flow.context import PauseRun, RunContext
from statebound.flow.machine import Machine
from statebound.flow.nested import ChildRun, absorb, child_path, pauses_of, run_child
from statebound.flow.outputs.nesting import Child, Nested
from statebound.flow.pauses import Answers, listing
from statebound.flow.projection import Projection, VarsIn
from statebound.flow.result import ExitReason, RunResult
from statebound.flow.variables import VarsSpec

__all__ = ["BranchFailed", "Sub"]

TaskFn = Callable[[RunContext[Any, Any]], str]


class BranchFailed(Exception):
    """A sub-machine or a branch ended otherwise than in a final state (an error, a limit)."""


class Sub(Nested):
    """Run ``flow`` as this state's output (module docstring). ``vars_in``: child field <- parent
    field (or ``fn(ctx) -> {child field: value}``); ``vars_out``: parent field <- child field;
    ``task``: the child's task (text or ``fn(ctx)``; the parent's by default); ``name``: its key
    in ids, events and diagrams (the flow's name by default). A child that ends otherwise than
    in a final state fails the state (:class:`BranchFailed`); one that pauses pauses the run."""

    __slots__ = ("flow", "name", "projection", "reads", "task", "writes")

    def __init__(self, flow: Machine, *, vars_in: VarsIn | None = None, vars_out: Mapping[str, str] | None = None,
                 task: str | TaskFn | None = None, name: str | None = None) -> None:
        if not isinstance(flow, Machine):
            raise DefinitionError(f"Sub runs a Flow, not {flow!r}")
        self.flow = flow
        self.name = name or flow.name
        if "/" in self.name:
            raise DefinitionError(f"Sub(name={self.name!r}): a name without '/' (it is part of the ids of pauses)")
        self.projection = Projection(vars_in or {}, dict(vars_out or {}))
        self.task = task
        self.writes: Sequence[str] = tuple(self.projection.vars_out)
        self.reads: Sequence[str] = self.projection.reads

    @property
    def label(self) -> str:
        return f"Sub({self.name})"

    def children(self) -> Sequence[Child]:
        return (Child(self.name, self.flow),)

    def problems_in(self, state: str, vars: VarsSpec | None) -> list[str]:  # noqa: A002
        return self.projection.problems(f"state {state!r}: {self.label}", vars, self.flow.vars)

    def child_run(self, ctx: RunContext[Any, Any], key: str, reply: Answers, **fields: Any) -> ChildRun:
        """The child to run for ``ctx`` under ``key`` (``fields``: its starting fields besides the
        projected ones, a fan-out's item)."""
        task = self.task(ctx) if callable(self.task) else (self.task or ctx.task)
        start = {**self.projection.start(ctx), **fields} if self.flow.vars is not None else None
        return ChildRun(key, self.flow, task, start, reply)

    async def run(self, ctx: RunContext[Any, Any]) -> None:
        reply, ctx.reply = ctx.reply, None
        result = await run_child(ctx, self.child_run(ctx, self.name, reply))
        absorb(ctx, self.name, result)
        ctx.check_budget()
        path = child_path(ctx, self.name)
        if result.exit_reason is ExitReason.PAUSED:
            raise PauseRun(listing(pauses_of(path, result)))
        if result.exit_reason is not ExitReason.FINAL:
            raise failure(path, result)
        if self.writes:
            ctx.update(self.projection.results(result.vars), by=self.label)


def failure(path: str, result: RunResult[Any]) -> BranchFailed:
    """The error of child ``path`` that ended ``result`` without reaching a final state."""
    why = f": {type(result.error).__name__}: {result.error}" if result.error is not None else ""
    return BranchFailed(f"{path} ended with {result.exit_reason.value} in state {result.exit_state!r}{why}")
