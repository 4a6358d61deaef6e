"""The state of one run, as tools, rules and output functions see it.

A :class:`RunContext` is handed to every tool (``fn(ctx)``), rule (``test(ctx)``) and output
function. Read ``task``, ``deps``, ``history``, ``state``, ``turn`` and ``visits``; custom output
functions write through :meth:`RunContext.add` and :meth:`RunContext.complete`, which keep the
history, the usage accounting, the token budget and the event stream consistent.

A stored run comes back as a :class:`Snapshot` (see :mod:`statebound.flow.live`), from which
:meth:`RunContext.restore` rebuilds the context exactly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Hashable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass
from time import perf_counter
from typing import Any, Generic, Literal, Protocol, cast

from typing_extensions import TypeVar

from statebound.errors import DefinitionError
from statebound.flow.agent import Agent
from statebound.flow.declared_writes import DeclaredWrites, Declares
from statebound.flow.events import BudgetHit, MessageAdded, StepEvent, TokenDelta, VarsWritten
from statebound.flow.history import Entry, EntryRole, MessageCache, Source, system_text
from statebound.flow.json_data import json_problem
from statebound.flow.result import CallKind, CallRecord, ExitReason, RunResult
from statebound.flow.tally import UsageTally
from statebound.flow.variables import VarsSpec, VarsT
from statebound.llm.base import LLM, Completion, Message, Request, Usage
from statebound.llm.conformance import check_llm, complete_checked
from statebound.llm.streaming import streaming_to, token_sink

__all__ = ["DepsT", "MachineInfo", "OutputInfo", "PauseRun", "RunContext", "RunHook", "Snapshot", "StepKind", "StopRun", "ToolIntent",
           "VarsT"]


T = TypeVar("T")
DepsT = TypeVar("DepsT", default=Any)  # what a run's tools get as ctx.deps: Flow[VarsT, DepsT], RunContext[VarsT, DepsT]


class StateInfo(Protocol):
    """What a run reads of a state besides running it."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...


class MachineInfo(Protocol):
    """What a run reads of its flow (``ctx.flow``): a :class:`~statebound.flow.machine.Machine`."""

    @property
    def name(self) -> str: ...

    @property
    def initial(self) -> str: ...

    @property
    def system(self) -> str | None: ...

    @property
    def token_budget(self) -> int | None: ...

    @property
    def states_by_name(self) -> Mapping[str, StateInfo]: ...

    @property
    def vars(self) -> VarsSpec | None: ...


class OutputInfo(Declares, Protocol):
    """What a run reads of the output function running (``ctx.output``): an
    :class:`~statebound.flow.outputs.base.Output`; its label and declared writes, and:"""

    @property
    def pure(self) -> bool: ...


# start: the task is in the history; intent: a tool that must not run twice is about to run;
# progress: part of an output's work is done (a model reply with tool calls, one call's result);
# output: an output function finished; transition: the next state is chosen, not yet entered
StepKind = Literal["start", "intent", "progress", "output", "transition"]

# the tool an intent announces, and the id of the model's call when the model called it
ToolIntent = tuple[str, str | None]


class RunHook(Protocol):
    """Told of each step of a run as it happens, and of its end (a checkpointer's recorder,
    :mod:`statebound.flow.live`)."""

    def step(self, ctx: RunContext[Any, Any], kind: StepKind, *, tool: ToolIntent | None = None) -> None: ...

    def finished(self, ctx: RunContext[Any, Any], result: RunResult[Any]) -> None: ...


class StopRun(Exception):
    """Raised inside a run to end it with ``reason`` (caught by the engine, never escapes)."""

    def __init__(self, reason: ExitReason, detail: str) -> None:
        self.reason = reason
        super().__init__(detail)


class PauseRun(StopRun):
    """Raised by an output function that waits for a person: the run ends ``PAUSED`` with
    ``question`` pending; a resumed run gives the answer in ``ctx.reply``."""

    def __init__(self, question: str) -> None:
        self.question = question
        super().__init__(ExitReason.PAUSED, question)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Where a stored run stands: everything needed to continue it at the exact point.

    ``step`` is the index of the next output function of ``state`` to run (-1: ``state`` is
    still to be entered); ``trajectory`` lists the states entered so far; ``reply`` is a
    person's answer given on resume, for the output function that asked; ``vars`` are the
    flow variables' fields as stored (None: the flow declares none); ``output_start`` is where in
    the history the output function at ``step`` began, when it stopped part-way with its progress
    stored (a model's reply whose tool calls were not all run), else None.
    """

    task: str
    history: tuple[Entry, ...]
    calls: tuple[CallRecord, ...]
    trajectory: tuple[str, ...]
    state: str
    turn: int
    step: int
    entered_at: int
    reply: str | Mapping[str, str] | None = None  # by id: answers to pauses in branches (flow.pauses)
    vars: Mapping[str, Any] | None = None
    output_start: int | None = None


class RunContext(Generic[VarsT, DepsT]):
    """The live state of one run. Treat ``history`` and ``visits`` as read-only; ``vars`` (the
    flow's typed variables, None when it declares none) changes through :meth:`update`, by the
    output function running (``output``), within what it declares it writes."""

    __slots__ = (
        "_cost",
        "_deliver",
        "_emit",
        "_hook",
        "_llm",
        "_messages",
        "_on_token",
        "_opened",
        "_usage",
        "agent",
        "calls",
        "declared",
        "deps",
        "entered_at",
        "flow",
        "history",
        "output",
        "output_start",
        "reply",
        "speaker",
        "state",
        "step",
        "task",
        "turn",
        "vars",
        "vars_written",
        "visits",
    )

    def __init__(
        self,
        *,
        flow: MachineInfo,
        task: str,
        deps: DepsT,
        llm: LLM | None,
        emit: Callable[[StepEvent], None] | None,
        cost: Callable[[str, Usage], float | None],
        on_token: Callable[[TokenDelta], None] | None = None,
        hook: RunHook | None = None,
        deliver: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.flow = flow
        self.task = task
        self.deps = deps
        self.history: list[Entry] = []
        self.state = flow.initial
        self.turn = 0
        self.visits: dict[str, int] = {}
        self.entered_at = 0  # history index at which the current state visit began
        self.step = -1  # checkpointed runs: the output function now running (-1: entering the state)
        self.output_start: int | None = None  # checkpointed runs: the history index where it began
        self.reply: str | Mapping[str, str] | None = None  # a person's answer(s), given on resume, not yet taken
        self.output: OutputInfo | None = None  # the output function running (the engine sets it)
        self.agent: Agent | None = None  # the current state's (or group-chat role's) agent
        self.speaker: str | None = None  # the group-chat role now speaking
        self.calls: list[CallRecord] = []
        self.declared: DeclaredWrites | None = None  # what declared writes were made (a run from its start)
        self._usage = UsageTally()
        if llm is not None:
            check_llm(llm)  # a backend missing part of the protocol is refused before the run
        self._llm = llm
        self._emit = emit
        self._deliver = deliver  # hands the events emitted so far to the listeners (None: nobody listens)
        self._cost = cost
        self._on_token = on_token
        self._hook = hook
        self._messages = MessageCache()
        self._opened: tuple[AsyncExitStack, dict[Hashable, Any]] | None = None  # what the run's outputs share
        spec = flow.vars
        self.vars: VarsT = cast(VarsT, None if spec is None else spec.initial)
        self.vars_written: dict[str, Any] = {} if spec is None else dict(spec.initial_data)  # not yet checkpointed

    def start_with(self, vars: Any) -> None:  # noqa: A002 - the name users write
        """Start from other variables than the flow's defaults: an instance of its type, or a
        mapping of some of its fields (each checked as a write is)."""
        spec = self.flow.vars
        if spec is None:
            raise DefinitionError(f"vars= sets a run's starting variables, but flow {self.flow.name!r} declares "
                                  "none: give it Flow(vars=YourType)")
        value, data = spec.start(vars, by=f"the starting vars of flow {self.flow.name!r}")
        self.vars = value
        self.vars_written = dict(data)

    def update(self, changes: Mapping[str, Any], *, by: str) -> None:
        """Write fields of the flow variables (``by``: the output function writing, for errors);
        each must be one the output running declares it writes."""
        spec = self.flow.vars
        if spec is None:
            raise DefinitionError(f"{by} writes flow variables ({', '.join(changes)}), but flow {self.flow.name!r} "
                                  "declares none: give it Flow(vars=YourType)")
        if not changes:
            return
        value, written = spec.update(self.vars, changes, by=by)
        declared = () if self.output is None else self.output.writes
        undeclared = [name for name in changes if name not in declared]
        if undeclared:
            raise DefinitionError(f"{by} writes {undeclared[0]!r}, which its writes={list(declared)} does not declare: "
                                  f"add it{'' if self.output is not None else ' (only an output function writes)'}")
        self.vars = value
        self.vars_written.update(written)
        if self.declared is not None and self.output is not None:
            self.declared.wrote(self.output, changes)
        if self._emit is not None:
            self._emit(VarsWritten(self.state, by, {name: getattr(value, name) for name in written}, written))

    def restore(self, snapshot: Snapshot) -> None:
        """Take the place of a stored run: its history, usage, calls, counters and position."""
        self.history[:] = snapshot.history
        self.calls[:] = snapshot.calls
        self._usage = UsageTally()
        self.visits.update(Counter(snapshot.trajectory))
        self.state, self.turn, self.step = snapshot.state, snapshot.turn, snapshot.step
        self.entered_at = snapshot.entered_at
        self.reply = snapshot.reply
        spec = self.flow.vars
        if spec is not None:
            self.vars = spec.load(snapshot.vars or {})
            self.vars_written.clear()
        elif snapshot.vars:
            raise DefinitionError(f"the stored thread has flow variables ({', '.join(snapshot.vars)}), but flow "
                                  f"{self.flow.name!r} declares none")

    def checkpoint(self, kind: Literal["progress", "intent"], *, tool: str | None = None,
                   call: str | None = None) -> None:
        """In a checkpointed run, store the output function's progress so far (``"progress"``:
        what it added is never done again on resume), or announce that ``tool`` (called by the
        model as ``call``) is about to run and must not run twice (``"intent"``: a resume after a
        crash inside it asks a person first). A no-op in a run that is not checkpointed."""
        if self._hook is not None:
            self._hook.step(self, kind, tool=None if tool is None else (tool, call))

    async def opened(self, key: Hashable, opener: Callable[[], AbstractAsyncContextManager[T]]) -> T:
        """What ``opener()`` enters, entered once per run for ``key`` (the run's outputs share
        it: a connection to an MCP server) and exited when the run ends, however it ends."""
        if self._opened is None:
            self._opened = (AsyncExitStack(), {})
        exits, values = self._opened
        if key not in values:
            values[key] = await exits.enter_async_context(opener())
        return cast(T, values[key])

    async def close(self) -> None:
        """Exit what :meth:`opened` entered (the engine calls it as the run ends)."""
        if self._opened is not None:
            exits, self._opened = self._opened[0], None
            await exits.aclose()

    # ---- reading -------------------------------------------------------------------------
    @property
    def hook(self) -> RunHook | None:
        """What records the run's steps (a checkpointer's recorder), or None: sub-machines store
        their runs beside it (:mod:`statebound.flow.nested`)."""
        return self._hook

    @property
    def usage(self) -> Usage:
        """The usage of the run's LLM calls so far (``calls`` added up)."""
        return self._usage.total(self.calls)

    @property
    def usage_by_state(self) -> dict[str, Usage]:
        """The usage of the run's LLM calls so far, by the state that made them."""
        return self._usage.by_state(self.calls)

    @property
    def last(self) -> Entry | None:
        """The latest history entry, or None."""
        return self.history[-1] if self.history else None

    def last_of(self, source: Source, *, since_entered: bool = False) -> Entry | None:
        """The latest entry from ``source`` (only in the current state visit if ``since_entered``)."""
        history = self.history
        stop = self.entered_at if since_entered else 0
        for i in range(len(history) - 1, stop - 1, -1):
            if history[i].source == source:
                return history[i]
        return None

    @property
    def since_entered(self) -> list[Entry]:
        """The entries added since the current state was entered."""
        return self.history[self.entered_at :]

    def messages(self) -> tuple[Message, ...]:
        """The history as chat messages for the current agent (see :mod:`statebound.flow.history`)."""
        instruction = self.agent.instruction if self.agent is not None else None
        system = self.flow.system
        return self._messages.render(self.history, system_text(system, instruction) if system or instruction else None)

    def llm_for(self, override: LLM | None = None) -> LLM:
        """The LLM to call: ``override``, else the current agent's, else the run's."""
        llm = override or (self.agent.llm if self.agent is not None else None) or self._llm
        if llm is None:
            raise DefinitionError(
                f"state {self.state!r} calls an LLM but none is set: pass llm= to Flow.run, "
                "or give the state an Agent(llm=...), or the CallLLM/llm_choice an llm="
            )
        return llm

    # ---- writing (for output functions) ---------------------------------------------------
    def emit(self, event: StepEvent) -> None:
        """Send an event to the run's listeners (no-op when nobody listens)."""
        if self._emit is not None:
            self._emit(event)

    async def deliver(self) -> None:
        """Hand the events emitted so far to the listeners now, not when the step ends (a child
        run's events, as they happen; a long output's progress)."""
        if self._deliver is not None:
            await self._deliver()

    def add(
        self,
        role: EntryRole,
        content: str,
        source: Source,
        *,
        name: str | None = None,
        ok: bool | None = None,
        usage: Usage | None = None,
        data: Any = None,
    ) -> Entry:
        """Append an entry to the history (tagged with the current state and speaker). A tool's
        ``data`` that would not come back from the store as it is (NaN, an integer beyond 64 bits,
        nesting too deep: :mod:`statebound.flow.json_data`) is refused, naming the tool and place."""
        if source == "tool" and data is not None and (problem := json_problem(data, other_types=True)):
            raise DefinitionError(f"tool {name or self.speaker!r} in state {self.state!r} returned data that "
                                  f"cannot be stored: {problem}; return finite numbers and 64-bit integers "
                                  "(a string for anything larger)")
        entry = Entry(role, content, self.state, source, name or self.speaker, ok, usage, data)
        self.history.append(entry)
        if self._emit is not None:
            self._emit(MessageAdded(len(self.history) - 1, entry))
        return entry

    async def complete(
        self, request: Request, *, llm: LLM | None = None, kind: CallKind = "llm", stream: bool = False
    ) -> Completion:
        """Call an LLM and record the usage (per call, per state, per run). ``stream``: the reply
        is one a person reads (not a score or a pick), handed on piece by piece when the run was
        asked for tokens.

        The token budget is enforced by :meth:`check_budget`, which the engine calls after each
        output function, so the reply that uses the budget up is still kept in the history.
        """
        model = self.llm_for(llm)
        sink = self._token_sink() if stream and self._on_token is not None else None
        started = perf_counter()
        if sink is None and token_sink() is None:  # nobody listens here, nor outside: nothing to set
            completion = await complete_checked(model, request)
        else:
            with streaming_to(sink):
                completion = await complete_checked(model, request)
        usage = completion.usage
        self.calls.append(CallRecord(self.state, kind, completion.model, usage, self._cost(completion.model, usage),
                                     perf_counter() - started))
        return completion

    def _token_sink(self) -> Callable[[str], None] | None:
        """Where the pieces of a reply written now go: the run's ``on_token``, as ``TokenDelta``s."""
        on_token, state = self._on_token, self.state
        if on_token is None:
            return None
        return lambda text: on_token(TokenDelta(state, text))

    def check_budget(self) -> None:
        """Stop the run when the token budget is used up."""
        budget = self.flow.token_budget
        if budget is None:
            return
        used = self.usage.total_tokens
        if used >= budget:
            if self._emit is not None:
                self._emit(BudgetHit("tokens", self.state, used, budget))
            raise StopRun(ExitReason.BUDGET, f"token budget of {budget} used up ({used} tokens)")
