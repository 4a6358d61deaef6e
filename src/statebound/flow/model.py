"""The user-facing :class:`Flow`: a compiled :class:`~statebound.flow.machine.Machine` that runs
(Algorithm 1 of the StateFlow paper, :mod:`statebound.flow.engine`), persists and resumes runs
(:mod:`statebound.flow.live`) and draws itself (:mod:`statebound.flow.draw`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar, overload

from statebound.errors import DefinitionError
from statebound.flow import draw_nested
from statebound.flow.child_flows import flow_at
from statebound.flow.context import DepsT
from statebound.flow.engine import FlowRun, RunOptions, stream, token_pieces
from statebound.flow.events import TokenDelta
from statebound.flow.listeners import Event, EventCallback
from statebound.flow.live.child_threads import ancestry, fork_name
from statebound.flow.live.session import run_thread
from statebound.flow.live.store import Checkpointer
from statebound.flow.machine import Machine
from statebound.flow.result import RunResult
from statebound.flow.states import Edge, State, Transition
from statebound.flow.variables import VarsT
from statebound.llm.base import LLM

__all__ = ["Edge", "Flow", "State", "Transition"]

T = TypeVar("T")


def _run_blocking(start: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to the end from sync code (inside or outside a running event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(start())
    context = contextvars.copy_context()  # the caller's context variables (the MCP servers in use) go along
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(context.run, lambda: asyncio.run(start())).result()


def _is_a(value: object, kind: type) -> bool:
    try:
        return isinstance(value, kind)
    except TypeError:  # a type isinstance cannot check (a Protocol that is not runtime-checkable)
        return True


class Flow(Machine, Generic[VarsT, DepsT]):
    """A validated StateFlow model that runs. Configuration is keyword-only; see ``docs/flow.md``
    (and ``docs/live-flows.md`` for checkpoints, resume, pauses for a person and forks).

    ``max_turns`` bounds the number of transitions; ``visit_limits`` bounds how often a state may
    be entered; ``token_budget`` bounds the run's total LLM tokens. ``system`` is the system
    prompt of every LLM call. ``vars`` declares the run's typed variables; ``deps`` the type of
    what its tools get as ``ctx.deps`` (a run given another is refused, naming both).
    """

    __slots__ = ()

    # Typed for mypy: Flow(...) is a Flow[None, Any]; Flow(vars=Ticket) (the class or an instance) a
    # Flow[Ticket, Any], whose results' vars are Tickets (RunResult[Ticket]); deps=Desk makes it a
    # Flow[..., Desk], whose runs take a Desk as deps and whose tools may read ctx: RunContext[Ticket, Desk].
    @overload
    def __init__(self: Flow[None, DepsT], *, name: str, initial: str, states: Iterable[State], system: str | None = None,
                 max_turns: int = 20, token_budget: int | None = None, visit_limits: Mapping[str, int] | None = None,
                 vars: None = None, deps: type[DepsT] | None = None) -> None: ...  # noqa: A002

    @overload
    def __init__(self: Flow[VarsT, DepsT], *, name: str, initial: str, states: Iterable[State], system: str | None = None,
                 max_turns: int = 20, token_budget: int | None = None, visit_limits: Mapping[str, int] | None = None,
                 vars: type[VarsT], deps: type[DepsT] | None = None) -> None: ...  # noqa: A002

    @overload
    def __init__(self: Flow[VarsT, DepsT], *, name: str, initial: str, states: Iterable[State], system: str | None = None,
                 max_turns: int = 20, token_budget: int | None = None, visit_limits: Mapping[str, int] | None = None,
                 vars: VarsT, deps: type[DepsT] | None = None) -> None: ...  # noqa: A002

    def __init__(self, **configuration: Any) -> None:
        super().__init__(**configuration)

    # ---- running -------------------------------------------------------------------------
    def start(self, task: str, *, llm: LLM | None = None, deps: DepsT | None = None,
              on_event: EventCallback | Sequence[EventCallback] | None = None, record_events: bool = True,
              on_token: Callable[[TokenDelta], None] | None = None, vars: VarsT | Mapping[str, Any] | None = None,  # noqa: A002
              ) -> FlowRun[VarsT, DepsT]:
        """A run of ``task`` that goes a step at a time: ``await run.next()`` enters a state, runs
        one output function or takes one transition, and returns that step's event, until
        ``RunFinished``; ``run.result`` is then set (the options: :meth:`run`)."""
        return FlowRun(self, task, self._options(llm, deps, on_event, record_events, on_token, vars))

    async def run(
        self,
        task: str,
        *,
        llm: LLM | None = None,
        deps: DepsT | None = None,
        on_event: EventCallback | Sequence[EventCallback] | None = None,
        record_events: bool = True,
        checkpointer: Checkpointer | None = None,
        thread: str | None = None,
        on_token: Callable[[TokenDelta], None] | None = None,
        vars: VarsT | Mapping[str, Any] | None = None,  # noqa: A002 - the name users write
    ) -> RunResult[VarsT]:
        """Solve ``task``: append it to the history, then move through the states until a final
        state, a limit or an error. ``llm`` is the default model; ``deps`` is passed to tools as
        ``ctx.deps``; ``on_event`` receives every event (sync or async callables);
        ``record_events=False`` leaves ``result.events`` empty; ``on_token`` receives each piece of
        every reply as the model writes it (a ``TokenDelta``; from the model's worker thread when
        it runs in one); ``vars`` starts the flow variables from other values than the type's
        defaults (an instance of the type, or a mapping of some of its fields).

        With a ``checkpointer`` and a ``thread`` name every step is stored; running a stored
        thread again continues it from its last checkpoint."""
        options = self._options(llm, deps, on_event, record_events, on_token, vars)
        if checkpointer is None and thread is None:
            return await FlowRun(self, task, options).to_end()
        if checkpointer is None or thread is None:
            raise DefinitionError("pass both checkpointer= and thread= to store a run (or neither)")
        return await run_thread(self, thread, store=checkpointer, options=options, task=task)

    async def resume(
        self,
        thread: str,
        *,
        checkpointer: Checkpointer,
        input: str | Mapping[str, str] | None = None,  # noqa: A002 - the name the docs promise
        llm: LLM | None = None,
        deps: DepsT | None = None,
        on_event: EventCallback | Sequence[EventCallback] | None = None,
        record_events: bool = True,
        on_token: Callable[[TokenDelta], None] | None = None,
    ) -> RunResult[VarsT]:
        """Continue the stored ``thread`` from its last checkpoint. ``input`` answers the question
        a paused thread waits on (``result.pending``), or, paused in parallel branches or sub-machines,
        answers some or all of their questions by id (``{id: answer}``: :mod:`statebound.flow.pauses`);
        a finished thread returns its result."""
        options = self._options(llm, deps, on_event, record_events, on_token, None)
        return await run_thread(self, thread, store=checkpointer, options=options, reply=input)

    async def stream(self, task: str, *, llm: LLM | None = None, deps: DepsT | None = None,
                     tokens: bool = False, vars: VarsT | Mapping[str, Any] | None = None,  # noqa: A002
                     ) -> AsyncIterator[Event | TokenDelta]:
        """Run and yield each event as it happens; the last one is ``RunFinished`` (with the result).
        ``tokens=True`` yields each reply's pieces too (``TokenDelta``) as the model writes them."""
        queue: asyncio.Queue[Event | TokenDelta] = asyncio.Queue()
        options = self._options(llm, deps, queue.put_nowait, False, token_pieces(queue) if tokens else None, vars)
        async for event in stream(FlowRun(self, task, options), queue):
            yield event

    def run_sync(
        self,
        task: str,
        *,
        llm: LLM | None = None,
        deps: DepsT | None = None,
        on_event: EventCallback | Sequence[EventCallback] | None = None,
        record_events: bool = True,
        checkpointer: Checkpointer | None = None,
        thread: str | None = None,
        on_token: Callable[[TokenDelta], None] | None = None,
        vars: VarsT | Mapping[str, Any] | None = None,  # noqa: A002
    ) -> RunResult[VarsT]:
        """:meth:`run` for synchronous code (works inside or outside a running event loop)."""
        return _run_blocking(lambda: self.run(task, llm=llm, deps=deps, on_event=on_event, record_events=record_events,
                                              checkpointer=checkpointer, thread=thread, on_token=on_token, vars=vars))

    def resume_sync(
        self,
        thread: str,
        *,
        checkpointer: Checkpointer,
        input: str | Mapping[str, str] | None = None,  # noqa: A002
        llm: LLM | None = None,
        deps: DepsT | None = None,
        on_event: EventCallback | Sequence[EventCallback] | None = None,
        record_events: bool = True,
        on_token: Callable[[TokenDelta], None] | None = None,
    ) -> RunResult[VarsT]:
        """:meth:`resume` for synchronous code."""
        return _run_blocking(lambda: self.resume(thread, checkpointer=checkpointer, input=input, llm=llm, deps=deps,
                                                 on_event=on_event, record_events=record_events, on_token=on_token))

    def _options(self, llm: LLM | None, deps: DepsT | None, on_event: EventCallback | Sequence[EventCallback] | None,
                 record_events: bool, on_token: Callable[[TokenDelta], None] | None, vars: Any) -> RunOptions[DepsT]:  # noqa: A002
        """The one options object every way of running passes on (its ``deps`` checked against the
        type the flow declares)."""
        if self.deps is not None and deps is not None and not _is_a(deps, self.deps):
            raise DefinitionError(f"flow {self.name!r} takes deps of type {self.deps.__name__} (Flow(deps=...)), "
                                  f"not {type(deps).__name__}")
        return RunOptions(llm=llm, deps=deps, on_event=on_event, record_events=record_events, on_token=on_token,
                          vars=vars)

    def fork(self, thread: str, *, checkpointer: Checkpointer, at: int, name: str | None = None,
             edit: tuple[int, str] | None = None, vars: Mapping[str, Any] | None = None) -> str:  # noqa: A002
        """Start a new thread from ``thread``'s checkpoint ``at`` (see ``Checkpointer.fork``), named
        ``name`` or ``THREAD-at-AT``: ``edit`` rewrites a history entry (``(index, text)``),
        ``vars`` sets flow variables to values of their types (checked as a write is). ``thread``
        may be a child run's (``t1/Research.1/b2``, its ``vars`` the child flow's): the new thread
        is then top-level and runs on inside the child. Run it on with :meth:`resume`; returns
        its name."""
        data = None
        if vars:
            flow = self._flow_of(thread, checkpointer)
            if flow.vars is None:
                raise DefinitionError(f"flow {flow.name!r} declares no variables to set ({', '.join(vars)})")
            data = flow.vars.data(vars, by=f"the fork of {thread!r}")
        new = name or fork_name(thread, at, {info.thread for info in checkpointer.threads()})
        return checkpointer.fork(thread, at=at, thread=new, edit=edit, vars=data)

    def _flow_of(self, thread: str, checkpointer: Checkpointer) -> Machine:
        """The flow that stored ``thread``: this one, or for a child run's thread the flow this one
        runs at the child's path (this one when it is the child's flow)."""
        links = ancestry(checkpointer, thread)
        if not links:
            return self
        found = flow_at(self, thread[len(links[-1].parent) + 1:])
        record = checkpointer.record(thread)
        if found is None and record is not None and record.flow == self.name:
            return self
        if found is None:
            raise DefinitionError(f"flow {self.name!r} runs no child flow at {thread!r}: fork it with the top-level "
                                  "flow that ran it")
        return found

    # ---- drawing -------------------------------------------------------------------------
    def to_mermaid(self, *, reads_writes: bool = False, nested: bool = True) -> str:
        """A Mermaid ``stateDiagram-v2`` of the states and transitions (``reads_writes``: with the
        flow variables each state reads and writes; ``nested=False``: sub-machines collapsed into
        their states)."""
        return draw_nested.to_mermaid(self, reads_writes=reads_writes, nested=nested)

    def to_dot(self, *, reads_writes: bool = False, nested: bool = True) -> str:
        """A Graphviz DOT digraph of the states and transitions (``reads_writes``, ``nested``: as
        for :meth:`to_mermaid`)."""
        return draw_nested.to_dot(self, reads_writes=reads_writes, nested=nested)
