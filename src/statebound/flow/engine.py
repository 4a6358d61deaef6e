"""The run loop (Algorithm 1 of the StateFlow paper) and the event stream.

::

    history = [task]; state = initial; turns = 0
    while state is not final and turns < max_turns:
        for output in outputs(state): history.append(output(history))
        state = transition(state, history); turns += 1
    return state, history

plus per-state visit limits, a token budget, usage accounting and events. A :class:`RunHook`
(a checkpointer's recorder, :mod:`statebound.flow.live`) is told of every step; a
:class:`~statebound.flow.context.Snapshot` puts the loop back where a stored run stood: in its
state, at the output function it had reached.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from statebound.errors import ContextOverflow, DefinitionError
from statebound.flow.context import PauseRun, RunContext, RunHook, Snapshot, StepKind, StopRun
from statebound.flow.events import BudgetHit, StateEntered, TokenDelta, TransitionTaken
from statebound.flow.listeners import Event, EventCallback, Listeners, RunFinished, sinks_of
from statebound.flow.machine import Machine
from statebound.flow.observers import observe_run
from statebound.flow.result import ExitReason, RunResult
from statebound.flow.states import Edge
from statebound.llm.base import LLM, Usage

__all__ = ["RunHook", "StepKind", "execute", "result_of", "stream"]

@functools.cache  # one per process: the prices themselves are looked up on each call
def _pricing() -> Callable[[str, Usage], float | None]:
    try:
        from statebound.llm.pricing import price_for
    except ImportError:  # pricing is optional: leave cost to the caller
        return lambda model, usage: None

    def cost(model: str, usage: Usage) -> float | None:
        price = price_for(model)
        return None if price is None else price.of(usage)

    return cost


async def execute(
    machine: Machine,
    task: str,
    *,
    llm: LLM | None,
    deps: Any,
    on_event: EventCallback | Sequence[EventCallback] | None,
    record_events: bool,
    hook: RunHook | None = None,
    snapshot: Snapshot | None = None,
    on_token: Callable[[TokenDelta], None] | None = None,
) -> RunResult:
    """Run ``machine`` on ``task`` (use :meth:`Flow.run <statebound.flow.Flow.run>`), from the
    start or, given a ``snapshot``, from where a stored run stood."""
    if not isinstance(task, str):
        raise DefinitionError(f"task must be a string, got {type(task).__name__}")
    check_models(machine, llm)
    observers, llm = observe_run(machine.name, llm)  # tracing, when on
    sinks = sinks_of(on_event) + observers
    listeners = Listeners(sinks, record_events) if (sinks or record_events) else None
    emit = listeners.emit if listeners is not None else None
    ctx: RunContext[Any] = RunContext(flow=machine, task=task, deps=deps, llm=llm, emit=emit, cost=_pricing(),
                                        on_token=on_token, hook=hook)
    states, edges_of = machine.states_by_name, machine.edges
    visit_limits, max_turns = machine.visit_limits, machine.max_turns
    budget = machine.token_budget
    visits = ctx.visits
    error: BaseException | None = None
    pending: str | None = None
    resumed_part: int | None = None
    if snapshot is None:
        trajectory: list[str] = []
        ctx.add("user", task, "task")
        if hook is not None:
            hook.step(ctx, "start")
    else:
        ctx.restore(snapshot)
        trajectory = list(snapshot.trajectory)
        resumed_part = snapshot.output_start
    state = states[ctx.state]
    step = ctx.step  # -1: enter the state; else the output function to run next
    ctx.agent = state.agent
    try:
        while True:
            if step < 0:
                name = state.name
                ctx.state = name
                if not state.final:  # a limit stops the run at the door: the state is not entered,
                    # the run ends in the last state that was (BudgetHit names the refused one)
                    limit = visit_limits.get(name)
                    if limit is not None and visits.get(name, 0) >= limit:
                        ctx.emit(BudgetHit("visits", name, visits.get(name, 0) + 1, limit))
                        reason = ExitReason.VISIT_LIMIT
                        break
                    if ctx.turn >= max_turns:
                        ctx.emit(BudgetHit("turns", name, ctx.turn, max_turns))
                        reason = ExitReason.TURN_LIMIT
                        break
                visit = visits[name] = visits.get(name, 0) + 1
                trajectory.append(name)
                if emit is not None:
                    emit(StateEntered(name, ctx.turn, visit))
                if state.final:
                    reason = ExitReason.FINAL
                    break
                ctx.entered_at = len(ctx.history)
                ctx.agent = state.agent
                step = 0
            if listeners is not None and listeners.pending:
                await listeners.flush()
            for output in state.outputs[step:] if step else state.outputs:
                if hook is not None:  # checkpointed: ctx.step is where a stored run stands
                    ctx.step = step
                    if resumed_part is None:
                        ctx.output_start = len(ctx.history)
                    else:  # the output stopped part-way (its stored progress begins there)
                        ctx.output_start, resumed_part = resumed_part, None
                    if not getattr(output, "repeatable", True):
                        hook.step(ctx, "intent")
                await output.run(ctx)
                if hook is not None:
                    step = ctx.step = step + 1
                    hook.step(ctx, "output")
                if budget is not None:
                    ctx.check_budget()
                if listeners is not None and listeners.pending:
                    await listeners.flush()
            target, why, choice = await _next_state(ctx, edges_of[state.name])
            if budget is not None:
                ctx.check_budget()
            ctx.turn += 1
            if emit is not None:
                emit(TransitionTaken(state.name, target, ctx.turn, why, choice))
            state = states[target]
            step = -1
            if hook is not None:
                ctx.state, ctx.step = target, -1
                hook.step(ctx, "transition")
    except StopRun as stop:
        reason = stop.reason
        pending = stop.question if isinstance(stop, PauseRun) else None
    except ContextOverflow:  # a limit like the turn limit, not a failure: the history outgrew the model
        reason = ExitReason.CONTEXT
    except Exception as exc:  # a tool, an LLM or the flow failed: keep everything, report it
        reason, error = ExitReason.ERROR, exc
    finally:
        await ctx.close()  # what the outputs opened for the run (an MCP server's connection)
    ctx.agent = None
    if listeners is not None:
        await listeners.flush()
    result = result_of(ctx, trajectory, reason, error=error, pending=pending,
                       events=tuple(listeners.recorded or ()) if listeners is not None else ())
    if hook is not None:
        hook.finished(ctx, result)
    if listeners is not None and sinks:
        listeners.recorded = None
        listeners.pending.append(RunFinished(result))
        await listeners.flush()
    return result


def result_of(ctx: RunContext, trajectory: Sequence[str], reason: ExitReason, *,
              error: BaseException | None = None, pending: str | None = None,
              events: tuple[Any, ...] = ()) -> RunResult:
    """The :class:`RunResult` of a run that stands where ``ctx`` does, having entered the states of
    ``trajectory`` (it ends in the last of them: ``ctx.state`` may name one a limit refused)."""
    return RunResult(
        task=ctx.task,
        vars=ctx.vars,
        exit_state=trajectory[-1] if trajectory else ctx.state,
        exit_reason=reason,
        history=tuple(ctx.history),
        usage=ctx.usage,
        usage_by_state=ctx.usage_by_state,
        calls=tuple(ctx.calls),
        turns=ctx.turn,
        trajectory=tuple(trajectory),
        cost=_run_cost(ctx),
        error=error,
        events=events,
        pending=pending,
    )


def check_models(machine: Machine, llm: LLM | None) -> None:
    """Refuse before the run a decider whose chooser, or an output whose request (a Pick's method,
    a JSON schema), its model cannot run (their ``check_model``); the harness calls it before a
    benchmark's first episode for an agent that is a flow."""
    for state in machine.states:
        model = (state.agent.llm if state.agent is not None else None) or llm
        for edge in machine.edges[state.name]:
            if (check := getattr(edge.decider, "check_model", None)) is not None:
                check(model)
        for output in state.outputs:
            if (check := getattr(output, "check_model", None)) is not None:
                check(model, where=f"state {state.name!r}")


async def _next_state(ctx: RunContext, edges: Sequence[Edge]) -> tuple[str, str, Mapping[str, Any] | None]:
    """The next state, why, and the record of the choice an LLM made to decide it (if one did)."""
    for edge in edges:
        if edge.decider is None:
            if edge.test(ctx):  # type: ignore[misc]  # a rule edge always has a test
                return edge.target, edge.label, None  # type: ignore[return-value]
        else:
            decision = await edge.decider.decide(ctx)
            if decision.target is not None:
                return decision.target, decision.reason, decision.choice
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


async def stream(machine: Machine, task: str, *, llm: LLM | None, deps: Any,
                 tokens: bool = False) -> AsyncIterator[Event | TokenDelta]:
    """Run ``machine`` in a task and yield its events as they come (with ``tokens``, each reply's
    pieces too, as the model writes them); ends after ``RunFinished``."""
    queue: asyncio.Queue[Event | TokenDelta] = asyncio.Queue()
    loop, loop_thread = asyncio.get_running_loop(), threading.get_ident()

    def piece(delta: TokenDelta) -> None:
        if threading.get_ident() == loop_thread:
            queue.put_nowait(delta)
        else:  # the embedded model's worker thread: queued before the reply it is part of returns
            loop.call_soon_threadsafe(queue.put_nowait, delta)

    runner = asyncio.ensure_future(
        execute(machine, task, llm=llm, deps=deps, on_event=queue.put_nowait, record_events=False,
                on_token=piece if tokens else None)
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
