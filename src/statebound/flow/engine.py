"""The run loop (Algorithm 1 of the StateFlow paper), one step at a time.

::

    history = [task]; state = initial; turns = 0
    while state is not final and turns < max_turns:
        for output in outputs(state): history.append(output(history))
        state = transition(state, history); turns += 1
    return state, history

A :class:`FlowRun` takes that loop a step per :meth:`FlowRun.next`: it enters a state, runs one of
its output functions, or takes one transition, and returns the step's event (``StateEntered``,
``OutputDone``, ``TransitionTaken``; ``BudgetHit`` when a limit keeps it out of a state; then
``RunFinished``). :meth:`Flow.run <statebound.flow.Flow.run>`, ``stream`` and stored threads loop
over it. Besides, per-state visit limits, a token budget, usage accounting and events. Two kinds of
hook see each step: a :class:`~statebound.flow.context.RunHook` (a checkpointer's recorder,
:mod:`statebound.flow.live`) before an output that must not run twice and after each step, by its
kind; the event listeners (callbacks, tracing) after each step, which gets their events then. A
:class:`~statebound.flow.context.Snapshot` puts the run back where a stored run stood: in its
state, at the output function it had reached.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, cast

from statebound.errors import ContextOverflow, DefinitionError
from statebound.flow.context import (
    DepsT,
    PauseRun,
    RunContext,
    RunHook,
    Snapshot,
    StepKind,
    StopRun,
)
from statebound.flow.declared_writes import DeclaredWrites
from statebound.flow.events import BudgetHit, OutputDone, StateEntered, TokenDelta, TransitionTaken
from statebound.flow.listeners import Event, EventCallback, Listeners, RunFinished, sinks_of
from statebound.flow.machine import Machine
from statebound.flow.observers import observe_run
from statebound.flow.result import ExitReason, RunResult
from statebound.flow.rules import Decision
from statebound.flow.states import State
from statebound.flow.variables import VarsT
from statebound.llm.base import LLM, Usage

__all__ = ["FlowRun", "RunHook", "RunOptions", "Step", "StepKind", "check_models", "result_of", "stream", "token_pieces"]

Step = StateEntered | OutputDone | TransitionTaken | BudgetHit | RunFinished


@functools.cache  # one per process: the prices themselves are looked up once per model and run
def _pricing() -> Callable[[str, Usage], float | None] | None:
    try:
        from statebound.llm.pricing import price_for
    except ImportError:  # pricing is optional: leave cost to the caller
        return None
    return lambda model, usage: None if (price := price_for(model)) is None else price.of(usage)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions(Generic[DepsT]):
    """How to run, as :meth:`Flow.run <statebound.flow.Flow.run>` takes it: the default model, what
    the tools get as ``ctx.deps``, the event listeners, the token listener and the starting
    variables (an instance of the flow's type, or a mapping of some of its fields)."""

    llm: LLM | None = None
    deps: DepsT | None = None
    on_event: EventCallback | Sequence[EventCallback] | None = None
    record_events: bool = True
    on_token: Callable[[TokenDelta], None] | None = None
    vars: Any = None


class FlowRun(Generic[VarsT, DepsT]):
    """One run of ``machine`` on ``task``, a step at a time (module docstring): call :meth:`next`
    until it returns ``RunFinished`` (or :meth:`to_end`), from one task; ``result`` is then set.
    From the start, or, given a ``snapshot``, from where a stored run stood (``hook``: its
    recorder)."""

    __slots__ = ("_budget", "_emit", "_ending", "_hook", "_listeners", "_part", "_sinks", "_state", "_step", "ctx", "machine",
                 "result", "trajectory")

    def __init__(self, machine: Machine, task: str, options: RunOptions[DepsT] | None = None, *,
                 hook: RunHook | None = None, snapshot: Snapshot | None = None) -> None:
        if not isinstance(task, str):
            raise DefinitionError(f"task must be a string, got {type(task).__name__}")
        options = options or RunOptions()
        check_models(machine, options.llm)
        observers, llm = observe_run(machine.name, options.llm)  # tracing, when on
        self._sinks = sinks_of(options.on_event) + observers
        self._listeners = Listeners(self._sinks, options.record_events) if (self._sinks or options.record_events) \
            else None
        self._emit = None if self._listeners is None else self._listeners.emit
        self.ctx: RunContext[VarsT, DepsT] = RunContext(
            flow=machine, task=task, deps=cast(DepsT, options.deps), llm=llm, cost=_pricing() or _unpriced, on_token=options.on_token,
            emit=self._emit, hook=hook, deliver=self._listeners.flush if self._listeners is not None and self._sinks
            else None)
        self.machine, self._hook, self._budget = machine, hook, machine.token_budget is not None
        self.result: RunResult[VarsT] | None = None
        self._ending: tuple[ExitReason, BaseException | None, str | None] | None = None  # why, the error, a question
        self._part: int | None = None  # where the output the run resumes at began, when it stopped part-way
        self.trajectory: list[str] = []
        if snapshot is None:
            self.ctx.declared = DeclaredWrites()
            self._start(options.vars)
        else:
            self._restore(snapshot, options.vars)
        self._state: State = machine.states_by_name[self.ctx.state]
        self._step = self.ctx.step  # -1: enter the state; 0..n-1: the output to run; n: the transition

    def _start(self, vars: Any) -> None:  # noqa: A002
        ctx = self.ctx
        if vars is not None:
            ctx.start_with(vars)
        ctx.add("user", ctx.task, "task")
        if self._hook is not None:
            self._hook.step(ctx, "start")

    def _restore(self, snapshot: Snapshot, vars: Any) -> None:  # noqa: A002
        if vars is not None:
            raise DefinitionError("vars= sets a new run's starting variables; a stored thread's come from its "
                                  "checkpoints (fork it, or update it, to set them)")
        self.ctx.restore(snapshot)
        self.trajectory = list(snapshot.trajectory)
        self._part = snapshot.output_start
        self.ctx.agent = self.machine.states_by_name[snapshot.state].agent

    # ---- stepping ----------------------------------------------------------------------------
    async def next(self) -> Step:
        """Take the next step and return its event (``RunFinished`` for the last)."""
        if self._ending is None:
            try:
                step = self._step
                if step < 0:
                    event: Step = self._enter()
                elif step < len(self._state.outputs):
                    state = self._state
                    await self._output(step)
                    event = OutputDone(state.name, step, state.outputs[step].label)
                else:
                    event = await self._transition()
                listeners = self._listeners
                if listeners is not None and listeners.pending:
                    await listeners.flush()
                return event
            except BaseException as exc:  # noqa: BLE001 - sorted by _stopped, which re-raises a cancellation
                await self._stopped(exc)
        return await self._finish()

    async def to_end(self) -> RunResult[VarsT]:
        """Take every step left; the run's result (the steps as :meth:`next` takes them, without
        building the events nobody asked for)."""
        if self.result is not None:
            return self.result
        if self._ending is None:
            try:
                await self._steps_to_end()
            except BaseException as exc:  # noqa: BLE001 - as in next()
                await self._stopped(exc)
        await self._finish()
        return cast(RunResult[VarsT], self.result)

    async def _steps_to_end(self) -> None:
        listeners = self._listeners
        while self._ending is None:
            if self._step < 0:
                self._enter()
            elif self._step < len(self._state.outputs):
                await self._output(self._step)
            else:
                await self._transition()
            if listeners is not None and listeners.pending:
                await listeners.flush()

    async def _stopped(self, exc: BaseException) -> None:
        """Why the run ends, from what escaped a step: a stop or pause, the history outgrowing the
        model (a limit, not a failure), or a failure kept with everything else; a cancellation
        closes what the outputs opened and goes on."""
        if isinstance(exc, StopRun):
            self._ending = (exc.reason, None, exc.question if isinstance(exc, PauseRun) else None)
        elif isinstance(exc, ContextOverflow):
            self._ending = (ExitReason.CONTEXT, None, None)
        elif isinstance(exc, Exception):  # a tool, an LLM or the flow failed: keep everything, report it
            self._ending = (ExitReason.ERROR, exc, None)
        else:
            await self.ctx.close()
            raise exc

    def __aiter__(self) -> AsyncIterator[Step]:
        return self._steps()

    async def _steps(self) -> AsyncIterator[Step]:
        while self.result is None:
            yield await self.next()

    def _enter(self) -> StateEntered | BudgetHit:
        """Enter the state the run stands at, unless a limit keeps it out (at the door: the run
        then ends in the last state it entered, and ``BudgetHit`` names the refused one)."""
        ctx, state, machine = self.ctx, self._state, self.machine
        name = state.name
        ctx.state = name
        visits = ctx.visits
        if not state.final:
            limit = machine.visit_limits.get(name)
            if limit is not None and visits.get(name, 0) >= limit:
                return self._refuse(BudgetHit("visits", name, visits.get(name, 0) + 1, limit), ExitReason.VISIT_LIMIT)
            if ctx.turn >= machine.max_turns:
                return self._refuse(BudgetHit("turns", name, ctx.turn, machine.max_turns), ExitReason.TURN_LIMIT)
        visit = visits[name] = visits.get(name, 0) + 1
        self.trajectory.append(name)
        event = StateEntered(name, ctx.turn, visit)
        if self._emit is not None:
            self._emit(event)
        if state.final:
            self._ending = (ExitReason.FINAL, None, None)
        else:
            ctx.entered_at = len(ctx.history)
            ctx.agent = state.agent
            self._step = 0
        return event

    def _refuse(self, event: BudgetHit, reason: ExitReason) -> BudgetHit:
        self.ctx.emit(event)
        self._ending = (reason, None, None)
        return event

    async def _output(self, index: int) -> None:
        """Run the state's output function ``index``; the checkpointer's recorder is told before
        one that must not run twice, and after each."""
        ctx, hook = self.ctx, self._hook
        output = self._state.outputs[index]
        ctx.step, ctx.output = index, output
        if hook is not None:
            ctx.output_start, self._part = (len(ctx.history) if self._part is None else self._part), None
            if not output.repeatable:
                hook.step(ctx, "intent")
        await output.run(ctx)
        if output.writes and ctx.declared is not None:
            ctx.declared.ran(self._state.name, output)
        self._step = ctx.step = index + 1
        if hook is not None:
            hook.step(ctx, "output")
        ctx.output = None
        if self._budget:
            ctx.check_budget()

    async def _transition(self) -> TransitionTaken:
        """Take the transition the state's deciders name (the first that decides); rules decide
        without a coroutine, a model's choice is awaited."""
        decided = self._decide_now()
        return self._take(*(decided if isinstance(decided, tuple) else await self._decide(decided)))

    def _decide_now(self) -> tuple[str, Decision] | int:
        """The transition the state's deciders name (the first that decides), as far as they
        decide without waiting: else the position of the first that must wait (on a model)."""
        ctx = self.ctx
        for index, edge in enumerate(self.machine.edges[self._state.name]):
            decision = edge.decide_now(ctx)
            if decision is None:
                return index
            if decision.target is not None:
                return decision.target, decision
        raise self._no_transition()

    async def _decide(self, start: int) -> tuple[str, Decision]:
        """The transition named by the deciders from position ``start`` on, waiting as they do."""
        ctx = self.ctx
        for edge in self.machine.edges[self._state.name][start:]:
            decision = edge.decide_now(ctx)
            if decision is None:
                decision = await edge.decide(ctx)
            if decision.target is not None:
                return decision.target, decision
        raise self._no_transition()

    def _no_transition(self) -> DefinitionError:
        history = self.ctx.history
        last = history[-1].content if history else ""
        return DefinitionError(f"no transition of state {self._state.name!r} fired (last message: {last[:120]!r}); "
                               "add a default such as (always(), 'Next') as its last transition")

    def _take(self, target: str, decision: Decision) -> TransitionTaken:
        """Take the transition to ``target`` the deciders named."""
        ctx, source = self.ctx, self._state.name
        if self._budget:
            ctx.check_budget()
        ctx.turn += 1
        event = TransitionTaken(source, target, ctx.turn, decision.reason, decision.choice)
        if self._emit is not None:
            self._emit(event)
        self._state, self._step = self.machine.states_by_name[target], -1
        ctx.state, ctx.step = target, -1
        if self._hook is not None:
            self._hook.step(ctx, "transition")
        return event

    async def _finish(self) -> RunFinished:
        """End the run: close what its outputs opened, deliver the events, build the result, tell
        the recorder, then the listeners (``RunFinished``)."""
        if self.result is not None:
            raise DefinitionError("the run has ended: its result is run.result")
        ctx, listeners = self.ctx, self._listeners
        reason, error, pending = self._ending or (ExitReason.ERROR, None, None)
        await ctx.close()  # what the outputs opened for the run (an MCP server's connection)
        ctx.agent = None
        if listeners is not None:
            await listeners.flush()
        events = tuple(listeners.recorded or ()) if listeners is not None else ()
        unwritten = tuple(ctx.declared.unwritten()) if reason is ExitReason.FINAL and ctx.declared is not None else ()
        result: RunResult[VarsT] = result_of(ctx, self.trajectory, reason, error=error, pending=pending, events=events,
                                             unwritten=unwritten)
        if self._hook is not None:
            self._hook.finished(ctx, result)
        self.result = result
        finished = RunFinished(result)
        if listeners is not None and self._sinks:
            listeners.recorded = None
            listeners.pending.append(finished)
            await listeners.flush()
        return finished


def _unpriced(model: str, usage: Usage) -> float | None:
    return None


def result_of(ctx: RunContext[Any, Any], trajectory: Sequence[str], reason: ExitReason, *,
              error: BaseException | None = None, pending: str | None = None,
              events: tuple[Any, ...] = (), unwritten: tuple[tuple[str, str, str], ...] = ()) -> RunResult[Any]:
    """The :class:`RunResult` of a run that stands where ``ctx`` does, having entered the states of
    ``trajectory`` (it ends in the last of them: ``ctx.state`` may name one a limit refused)."""
    costs = [call.cost for call in ctx.calls]
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
        cost=None if any(cost is None for cost in costs) else float(sum(cost or 0.0 for cost in costs)),
        error=error,
        events=events,
        pending=pending,
        unwritten=unwritten,
    )


def check_models(machine: Machine, llm: LLM | None) -> None:
    """Refuse before the run a decider whose chooser, or an output whose request (a Pick's method,
    a JSON schema), its model cannot run (their ``check_model``); the harness calls it before a
    benchmark's first episode for an agent that is a flow."""
    for state in machine.states:
        model = (state.agent.llm if state.agent is not None else None) or llm
        for edge in machine.edges[state.name]:
            edge.check_model(model)
        for output in state.outputs:
            output.check_model(model, where=f"state {state.name!r}")


async def stream(run: FlowRun[Any, Any], queue: asyncio.Queue[Event | TokenDelta]) -> AsyncIterator[Event | TokenDelta]:
    """Yield ``run``'s events as its steps make them (``queue`` gets them: the run's ``on_event``,
    and its ``on_token`` when it streams tokens); ends after ``RunFinished``. The steps are taken
    in one task of their own (what an output opens, an MCP session, lives in the task that opened
    it), while the events are handed on."""
    runner = asyncio.ensure_future(run.to_end())
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


def token_pieces(queue: asyncio.Queue[Event | TokenDelta]) -> Callable[[TokenDelta], None]:
    """What hands a reply's pieces to ``queue``: at once on the run's loop, from the embedded
    model's worker thread through the loop (queued before the reply they are part of returns)."""
    loop, loop_thread = asyncio.get_running_loop(), threading.get_ident()

    def piece(delta: TokenDelta) -> None:
        if threading.get_ident() == loop_thread:
            queue.put_nowait(delta)
        else:
            loop.call_soon_threadsafe(queue.put_nowait, delta)

    return piece

