"""The StateFlow model: states with output functions and transitions, assembled into a Flow.

A :class:`Flow` is validated when built (see :mod:`statebound.flow.validate`) and immutable
afterwards; ``run`` / ``stream`` / ``run_sync`` execute it (Algorithm 1 of the StateFlow paper,
see :mod:`statebound.flow.engine`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from statebound.errors import DefinitionError
from statebound.flow.context import RunContext
from statebound.flow.events import Event, EventCallback
from statebound.flow.outputs import Agent, Output
from statebound.flow.result import RunResult
from statebound.flow.rules import Decider, Rule, as_rule
from statebound.llm.base import LLM

__all__ = ["Edge", "Flow", "State", "Transition"]

Transition = tuple[Rule | Callable[[RunContext], bool], str] | Decider


class State:
    """A state: what happens on entering it (``outputs``, in order) and where to go next
    (``transitions``, first match wins). ``final`` states end the run and run nothing.

    ``agent`` (SF_Agent view) gives the state its own instruction and model: the instruction is
    sent to that agent only and never enters the shared history. ``description`` is shown to an
    LLM choosing among states (:func:`~statebound.flow.llm_choice`) and on diagrams.
    """

    __slots__ = ("agent", "description", "final", "name", "outputs", "transitions")

    def __init__(
        self,
        name: str,
        *,
        outputs: Sequence[Output] = (),
        transitions: Sequence[Transition] = (),
        final: bool = False,
        agent: Agent | None = None,
        description: str = "",
    ) -> None:
        if not isinstance(name, str) or not name:
            raise DefinitionError(f"a state needs a non-empty string name, got {name!r}")
        self.name = name
        self.outputs = tuple(outputs)
        self.transitions = tuple(transitions)
        self.final = final
        self.agent = agent
        self.description = description

    def __repr__(self) -> str:
        return f"State({self.name!r}{', final=True' if self.final else ''})"


class Edge:
    """A compiled transition: a ``rule`` with a fixed ``target``, or a ``decider`` naming it."""

    __slots__ = ("decider", "label", "rule", "target", "test")

    def __init__(self, test: Callable[[RunContext], bool] | None, target: str | None, label: str,
                 decider: Decider | None, rule: Rule | None = None) -> None:
        self.test = test
        self.target = target
        self.label = label
        self.decider = decider
        self.rule = rule

    @property
    def targets(self) -> tuple[str, ...]:
        return self.decider.targets if self.decider is not None else (self.target,)  # type: ignore[return-value]

    @property
    def catch_all(self) -> bool:
        """Whether this transition always fires (it then ends the list: later ones never fire)."""
        return bool(getattr(self.decider if self.decider is not None else self.rule, "catch_all", False))


def compile_transition(state: str, item: object) -> Edge:
    """Turn one ``transitions`` item into an :class:`Edge`, or explain how to write it."""
    if isinstance(item, Decider) and not isinstance(item, tuple):
        return Edge(None, None, item.label, item)
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], str):
        rule = as_rule(item[0])  # type: ignore[arg-type]
        return Edge(rule.test, item[1], rule.label, None, rule)
    raise DefinitionError(
        f"state {state!r}: transition {item!r} is not understood; write (rule, 'Target') "
        "such as (contains('Error'), 'Error'), or a decider such as llm_choice([...], fallback=...)"
    )


class Flow:
    """A validated StateFlow model. Configuration is keyword-only; see ``docs/flow.md``.

    ``max_turns`` bounds the number of transitions; ``visit_limits`` bounds how often a state may
    be entered; ``token_budget`` bounds the run's total LLM tokens. ``system`` is the system
    prompt of every LLM call.
    """

    __slots__ = ("edges", "initial", "max_turns", "name", "states", "states_by_name", "system", "token_budget", "visit_limits")

    def __init__(
        self,
        *,
        name: str,
        initial: str,
        states: Iterable[State],
        system: str | None = None,
        max_turns: int = 20,
        token_budget: int | None = None,
        visit_limits: Mapping[str, int] | None = None,
    ) -> None:
        from statebound.flow.validate import validate

        self.name = name
        self.initial = initial
        self.states = tuple(states)
        self.system = system
        self.max_turns = max_turns
        self.token_budget = token_budget
        self.visit_limits: Mapping[str, int] = MappingProxyType(dict(visit_limits or {}))
        self.states_by_name: Mapping[str, State] = MappingProxyType({s.name: s for s in self.states})
        self.edges: Mapping[str, tuple[Edge, ...]] = MappingProxyType(
            {s.name: tuple(compile_transition(s.name, t) for t in s.transitions) for s in self.states}
        )
        validate(self)

    def __repr__(self) -> str:
        return f"Flow({self.name!r}, states={[s.name for s in self.states]})"

    @property
    def final_states(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.states if s.final)

    def replace(self, **changes: Any) -> Flow:
        """A copy with some settings changed, e.g. ``flow.replace(max_turns=5)`` (validated again)."""
        settings = {
            "name": self.name,
            "initial": self.initial,
            "states": self.states,
            "system": self.system,
            "max_turns": self.max_turns,
            "token_budget": self.token_budget,
            "visit_limits": self.visit_limits,
        }
        unknown = set(changes) - set(settings)
        if unknown:
            raise DefinitionError(f"Flow.replace: unknown settings {sorted(unknown)}; use {sorted(settings)}")
        return Flow(**{**settings, **changes})

    # ---- running -------------------------------------------------------------------------
    async def run(
        self,
        task: str,
        *,
        llm: LLM | None = None,
        deps: Any = None,
        on_event: EventCallback | Sequence[EventCallback] | None = None,
        record_events: bool = True,
    ) -> RunResult:
        """Solve ``task``: append it to the history, then move through the states until a final
        state, a limit or an error. ``llm`` is the default model; ``deps`` is passed to tools as
        ``ctx.deps``; ``on_event`` receives every event (sync or async callables);
        ``record_events=False`` leaves ``result.events`` empty."""
        from statebound.flow.engine import execute

        return await execute(self, task, llm=llm, deps=deps, on_event=on_event, record_events=record_events)

    async def stream(self, task: str, *, llm: LLM | None = None, deps: Any = None) -> AsyncIterator[Event]:
        """Run and yield each event as it happens; the last one is ``RunFinished`` (with the result)."""
        from statebound.flow.engine import stream

        async for event in stream(self, task, llm=llm, deps=deps):
            yield event

    def run_sync(
        self,
        task: str,
        *,
        llm: LLM | None = None,
        deps: Any = None,
        on_event: EventCallback | Sequence[EventCallback] | None = None,
        record_events: bool = True,
    ) -> RunResult:
        """:meth:`run` for synchronous code (works inside or outside a running event loop)."""

        def start() -> RunResult:
            return asyncio.run(self.run(task, llm=llm, deps=deps, on_event=on_event, record_events=record_events))

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return start()
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(start).result()

    # ---- drawing -------------------------------------------------------------------------
    def to_mermaid(self) -> str:
        """A Mermaid ``stateDiagram-v2`` of the states and transitions."""
        from statebound.flow.draw import to_mermaid

        return to_mermaid(self)

    def to_dot(self) -> str:
        """A Graphviz DOT digraph of the states and transitions."""
        from statebound.flow.draw import to_dot

        return to_dot(self)
