"""Build-time checks of a Flow; every problem says how to fix it.

All problems are collected and raised together as one :class:`~statebound.errors.DefinitionError`
(one problem per line).
"""

from __future__ import annotations

import difflib
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Protocol

from statebound.errors import DefinitionError
from statebound.flow.outputs.base import Output
from statebound.flow.rules import Decider
from statebound.flow.states import State

__all__ = ["MachineParts", "distances", "reachable", "validate"]


class MachineParts(Protocol):
    """What validation reads of a :class:`~statebound.flow.machine.Machine` being built."""

    @property
    def name(self) -> str: ...

    @property
    def initial(self) -> str: ...

    @property
    def states(self) -> tuple[State, ...]: ...

    @property
    def edges(self) -> Mapping[str, tuple[Decider, ...]]: ...

    @property
    def max_turns(self) -> int: ...

    @property
    def token_budget(self) -> int | None: ...

    @property
    def visit_limits(self) -> Mapping[str, int]: ...


def _hint(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def distances(start: Iterable[str], graph: Mapping[str, Iterable[str]]) -> dict[str, int]:
    """The fewest transitions from any of ``start`` to each state reachable from them."""
    found = dict.fromkeys(start, 0)
    queue = deque(found)
    while queue:
        node = queue.popleft()
        for nxt in graph.get(node, ()):
            if nxt not in found:
                found[nxt] = found[node] + 1
                queue.append(nxt)
    return found


def reachable(start: Iterable[str], graph: Mapping[str, Iterable[str]]) -> set[str]:
    """The states reachable from ``start`` (included) in ``graph`` (state -> next states)."""
    return set(distances(start, graph))


def _problems(flow: MachineParts) -> list[str]:
    names = [s.name for s in flow.states]
    if not names:
        return ["the flow has no states; pass states=[State('Start', ...), State('End', final=True)]"]
    known = set(names)
    graph = {state.name: {t for e in flow.edges[state.name] for t in e.targets} for state in flow.states}
    problems = [*_setting_problems(flow, names, known), *_state_problems(flow, graph, known)]
    if problems or flow.initial not in known:
        return problems
    return _path_problems(flow, names, graph)


def _setting_problems(flow: MachineParts, names: list[str], known: set[str]) -> list[str]:
    """What is wrong with the flow's settings: names, initial and final states, limits."""
    problems: list[str] = []
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        problems.append(f"state names must be unique; rename the repeated {repeated}")
    if not flow.initial:
        problems.append(f"no initial state; pass initial= one of {names}")
    elif flow.initial not in known:
        problems.append(f"initial state {flow.initial!r} is not a state{_hint(flow.initial, known)} (states: {names})")
    if not any(s.final for s in flow.states):
        problems.append("no final state; mark the state(s) that end the run with State(..., final=True)")
    if not isinstance(flow.max_turns, int) or flow.max_turns < 1:
        problems.append(f"max_turns must be a positive int, got {flow.max_turns!r}")
    if flow.token_budget is not None and (not isinstance(flow.token_budget, int) or flow.token_budget < 1):
        problems.append(f"token_budget must be a positive int or None, got {flow.token_budget!r}")
    for state_name, limit in flow.visit_limits.items():
        if state_name not in known:
            problems.append(f"visit_limits names unknown state {state_name!r}{_hint(state_name, known)}")
        if not isinstance(limit, int) or limit < 1:
            problems.append(f"visit_limits[{state_name!r}] must be a positive int, got {limit!r}")
    return problems


def _state_problems(flow: MachineParts, graph: dict[str, set[str]], known: set[str]) -> list[str]:
    """What is wrong with each state on its own: its outputs, its transitions and their targets."""
    problems: list[str] = []
    for state in flow.states:
        edges = flow.edges[state.name]
        for output in state.outputs:
            if not isinstance(output, Output):
                problems.append(
                    f"state {state.name!r}: {output!r} is not an output function; use Instruction(text), "
                    "CallLLM(), CallTool(fn), Pick(...), Update(fn), GroupChat(...) or your own subclass of "
                    "statebound.flow.Output (an async run(ctx); docs/flow.md, Writing an output function)"
                )
        if state.final and (state.outputs or edges):
            problems.append(
                f"final state {state.name!r} has outputs or transitions, but a final state ends the run "
                "and runs nothing; move them to a state before it"
            )
        if not state.final and not edges:
            problems.append(
                f"state {state.name!r} has no transitions; add e.g. transitions=[(always(), 'End')] "
                "or mark it final=True"
            )
        for target in sorted(graph[state.name] - known):
            problems.append(
                f"state {state.name!r} has a transition to unknown state {target!r}{_hint(target, known)}"
            )
    return problems


def _path_problems(flow: MachineParts, names: list[str], graph: dict[str, set[str]]) -> list[str]:
    """States the initial state cannot reach, and states with no path to a final one."""
    problems: list[str] = []
    unreachable = [n for n in names if n not in reachable([flow.initial], graph)]
    if unreachable:
        problems.append(
            f"states {unreachable} cannot be reached from the initial state {flow.initial!r}; "
            "add a transition into them or remove them"
        )
    reverse: dict[str, set[str]] = {}
    for source, targets in graph.items():
        for target in targets:
            reverse.setdefault(target, set()).add(source)
    can_finish = reachable([s.name for s in flow.states if s.final], reverse)
    stuck = [n for n in names if n not in can_finish]
    if stuck:
        problems.append(
            f"states {stuck} have no path to a final state, so a run there can only end by a limit; "
            "add a transition from them toward a final state"
        )
    return problems


def validate(flow: MachineParts) -> None:
    """Raise :class:`DefinitionError` listing every problem of ``flow`` (or return None)."""
    problems = _problems(flow)
    if problems:
        raise DefinitionError(
            f"flow {flow.name!r} is not valid:\n" + "\n".join(f"- {p}" for p in problems)
        )
