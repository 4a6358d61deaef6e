"""The run loop (Algorithm 1 of the StateFlow paper) and the event stream.

::

    history = [task]; state = initial; turns = 0
    while state is not final and turns < max_turns:
        for output in outputs(state): history.append(output(history))
        state = transition(state, history); turns += 1
    return state, history

plus per-state visit limits, a token budget, usage accounting and events.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from statebound.errors import ContextOverflow, DefinitionError
from statebound.flow.context import RunContext, StopRun
from statebound.flow.events import (
    BudgetHit,
    Event,
    EventCallback,
    RunFinished,
    StateEntered,
    TransitionTaken,
)
from statebound.flow.result import ExitReason, RunResult
from statebound.llm.base import LLM, Usage

__all__ = ["execute", "stream"]


def _pricing() -> Callable[[str, Usage], float | None]:
    try:
        from statebound.llm.pricing import price_for
    except ImportError:  # pricing is optional: leave cost to the caller
        return lambda model, usage: None

    def cost(model: str, usage: Usage) -> float | None:
        price = price_for(model)
        return None if price is None else price.of(usage)

    return cost


class _Listeners:
    """Queues events synchronously; ``flush`` delivers them (awaiting async callbacks) in order."""

    __slots__ = ("pending", "recorded", "sinks")

    def __init__(self, sinks: Sequence[EventCallback], record: bool) -> None:
        self.sinks = tuple(sinks)
        self.recorded: list[Event] | None = [] if record else None
        self.pending: list[Event] = []

    async def flush(self) -> None:
        pending = self.pending[:]
        self.pending.clear()  # in place: the run's emit is bound to this list's append
        if self.recorded is not None:
            self.recorded.extend(pending)
        for event in pending:
            for sink in self.sinks:
                outcome = sink(event)
                if inspect.isawaitable(outcome):
                    await outcome


def _sinks(on_event: EventCallback | Sequence[EventCallback] | None) -> list[EventCallback]:
    if on_event is None:
        return []
    if callable(on_event):
        return [on_event]
    sinks = list(on_event)
    for sink in sinks:
        if not callable(sink):
            raise DefinitionError(f"on_event must be a callable or a list of callables, got {sink!r}")
    return sinks


async def execute(
    flow: Any,
    task: str,
    *,
    llm: LLM | None,
    deps: Any,
    on_event: EventCallback | Sequence[EventCallback] | None,
    record_events: bool,
) -> RunResult:
    """Run ``flow`` on ``task`` (use :meth:`Flow.run <statebound.flow.Flow.run>`)."""
    if not isinstance(task, str):
        raise DefinitionError(f"task must be a string, got {type(task).__name__}")
    sinks = _sinks(on_event)
    listeners = _Listeners(sinks, record_events) if (sinks or record_events) else None
    emit = listeners.pending.append if listeners is not None else None
    ctx = RunContext(flow=flow, task=task, deps=deps, llm=llm, emit=emit, cost=_pricing())
    states, edges_of = flow.states_by_name, flow.edges
    visit_limits, max_turns = flow.visit_limits, flow.max_turns
    budget = flow.token_budget
    visits = ctx.visits
    trajectory: list[str] = []
    error: BaseException | None = None
    state = states[flow.initial]
    ctx.add("user", task, "task")
    try:
        while True:
            name = state.name
            ctx.state = name
            visit = visits[name] = visits.get(name, 0) + 1
            trajectory.append(name)
            if emit is not None:
                emit(StateEntered(name, ctx.turn, visit))
            if state.final:
                reason = ExitReason.FINAL
                break
            limit = visit_limits.get(name)
            if limit is not None and visit > limit:
                ctx.emit(BudgetHit("visits", name, visit, limit))
                reason = ExitReason.VISIT_LIMIT
                break
            if ctx.turn >= max_turns:
                ctx.emit(BudgetHit("turns", name, ctx.turn, max_turns))
                reason = ExitReason.TURN_LIMIT
                break
            ctx.entered_at = len(ctx.history)
            ctx.agent = state.agent
            if listeners is not None and listeners.pending:
                await listeners.flush()
            for output in state.outputs:
                await output.run(ctx)
                if budget is not None:
                    ctx.check_budget()
                if listeners is not None and listeners.pending:
                    await listeners.flush()
            target, why = await _next_state(ctx, edges_of[name])
            if budget is not None:
                ctx.check_budget()
            ctx.turn += 1
            if emit is not None:
                emit(TransitionTaken(name, target, ctx.turn, why))
            state = states[target]
    except StopRun as stop:
        reason = stop.reason
    except ContextOverflow:  # a limit like the turn limit, not a failure: the history outgrew the model
        reason = ExitReason.CONTEXT
    except Exception as exc:  # a tool, an LLM or the flow failed: keep everything, report it
        reason, error = ExitReason.ERROR, exc
    ctx.agent = None
    if listeners is not None:
        await listeners.flush()
    result = RunResult(
        task=task,
        exit_state=ctx.state,
        exit_reason=reason,
        history=tuple(ctx.history),
        usage=ctx.usage,
        usage_by_state=dict(ctx.usage_by_state),
        calls=tuple(ctx.calls),
        turns=ctx.turn,
        trajectory=tuple(trajectory),
        cost=_run_cost(ctx),
        error=error,
        events=tuple(listeners.recorded or ()) if listeners is not None else (),
    )
    if listeners is not None and sinks:
        listeners.recorded = None
        listeners.pending.append(RunFinished(result))
        await listeners.flush()
    return result


async def _next_state(ctx: RunContext, edges: Sequence[Any]) -> tuple[str, str]:
    for edge in edges:
        if edge.decider is None:
            if edge.test(ctx):
                return edge.target, edge.label
        else:
            decision = await edge.decider.decide(ctx)
            if decision.target is not None:
                return decision.target, decision.reason
    last = ctx.history[-1].content if ctx.history else ""
    raise DefinitionError(
        f"no transition of state {ctx.state!r} fired (last message: {last[:120]!r}); "
        "add a default such as (always(), 'Next') as its last transition"
    )


def _run_cost(ctx: RunContext) -> float | None:
    costs = [call.cost for call in ctx.calls]
    if any(c is None for c in costs):
        return None
    return float(sum(costs))  # type: ignore[arg-type]


async def stream(flow: Any, task: str, *, llm: LLM | None, deps: Any) -> AsyncIterator[Event]:
    """Run ``flow`` in a task and yield its events as they come; ends after ``RunFinished``."""
    queue: asyncio.Queue[Event] = asyncio.Queue()
    runner = asyncio.ensure_future(
        execute(flow, task, llm=llm, deps=deps, on_event=queue.put_nowait, record_events=False)
    )
    try:
        while True:
            getter = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({getter, runner}, return_when=asyncio.FIRST_COMPLETED)
            if getter not in done:
                getter.cancel()
                if queue.empty():
                    runner.result()  # re-raises what escaped the run (e.g. a bad argument)
                    return
                continue
            event = getter.result()
            yield event
            if isinstance(event, RunFinished):
                return
    finally:
        if not runner.done():
            runner.cancel()
