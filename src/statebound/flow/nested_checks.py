"""Static checks inside sub-machines and parallel branches (``statebound flow check``).

A child flow is checked like any flow, its findings named by their path (``Gather/search/Ask``),
and, as the child of its state:

* ``unreachable-in-sub`` (warning): a state of the child no run can enter, its transitions after a
  catch-all dropped (they never fire);
* ``branch-never-finishes`` (warning): no path of live transitions leads the child to a final
  state within its turn limit, so the state that runs it can only fail (or skip it);
* ``sub-never-writes`` (warning): the child's field that ``vars_out`` brings back is written by
  none of its outputs, so the parent gets the value it started with.

A field two branches write without a reducer, a reducer of the wrong type, a fan-out over a
variable that is not a list or a branch limit below 1 are refused when the flow is built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from statebound.flow.machine import Machine
from statebound.flow.outputs.nesting import Nested
from statebound.flow.outputs.parallel import Branches
from statebound.flow.outputs.sub import Sub
from statebound.flow.validate import distances

__all__ = ["Finding", "nested_findings"]

Finding = tuple[Literal["warning", "info"], str, str | None, str]  # severity, code, state (its path), message


def nested_findings(flow: Machine, check: Callable[[Machine], Iterable[Any]]) -> list[Finding]:
    """What is wrong inside ``flow``'s sub-machines and branches (``check``: the checks of a
    flow, :func:`statebound.flow.checks.check_flow`, run on each child)."""
    found: list[Finding] = []
    for state in flow.states:
        for output in state.outputs:
            if isinstance(output, Nested):
                found += _of_output(state.name, output, check)
    return found


def _of_output(state: str, output: Nested, check: Callable[[Machine], Iterable[Any]]) -> list[Finding]:
    found: list[Finding] = []
    for key, child in output.children():
        where = f"{state}/{key}"
        found += [(d.severity, d.code, f"{where}/{d.state}" if d.state else where, d.message) for d in check(child)]
        found += [("warning", "unreachable-in-sub", f"{where}/{name}",
                   f"no run of sub-machine {child.name!r} can enter it: the transitions into it come after a "
                   "catch-all; move them before it") for name in _unreachable(child)]
        if not _can_finish(child):
            found.append(("warning", "branch-never-finishes", state,
                          f"sub-machine {child.name!r} ({key}) has no path of live transitions to a final state within "
                          f"max_turns={child.max_turns}, so it always fails; give it one"))
    subs = [output] if isinstance(output, Sub) else [sub for _, sub in output.subs()] if isinstance(output, Branches) else []
    for sub in subs:
        found += [("warning", "sub-never-writes", state,
                   f"{sub.label} brings back {field!r} from field {source!r}, which no output of {sub.flow.name!r} "
                   "writes: the parent always gets its starting value; write it in the sub-machine or drop it")
                  for field, source in sub.projection.vars_out.items() if source not in _written(sub.flow)]
    return found


def _live(flow: Machine) -> dict[str, set[str]]:
    """Each state's targets, its transitions after the first catch-all left out."""
    graph: dict[str, set[str]] = {}
    for state in flow.states:
        targets: set[str] = set()
        for edge in flow.edges[state.name]:
            targets.update(edge.targets)
            if edge.catch_all:
                break
        graph[state.name] = targets
    return graph


def _unreachable(flow: Machine) -> list[str]:
    reached = distances([flow.initial], _live(flow))
    return [state.name for state in flow.states if state.name not in reached]


def _can_finish(flow: Machine) -> bool:
    steps = distances([flow.initial], _live(flow))
    return any(steps.get(name, flow.max_turns + 1) <= flow.max_turns for name in flow.final_states)


def _written(flow: Machine) -> set[str]:
    return {field for state in flow.states for output in state.outputs for field in output.writes}
