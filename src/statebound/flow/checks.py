"""Static checks of a Flow (``statebound flow check``): what is legal but almost certainly wrong.

Hard errors already raise when a flow is built (:mod:`statebound.flow.validate`); these are
warnings and infos, each with a stable code and a fix. Only what follows from the structure is
reported. Rules are taken to be functions of the run context: the same context, the same answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import CellType, FunctionType
from typing import TYPE_CHECKING, Literal

from statebound.flow.choosers import usable
from statebound.flow.nested_checks import nested_findings
from statebound.flow.outputs.ask_human import AskHuman
from statebound.flow.outputs.call_llm import CallLLM
from statebound.flow.outputs.call_tool import CallTool
from statebound.flow.outputs.instruction import Instruction
from statebound.flow.outputs.pick import Pick
from statebound.flow.rules import TEXT, Decider, FirstDue, LLMChoice, Rule, RuleEdge
from statebound.flow.validate import distances, reachable

if TYPE_CHECKING:
    from statebound.flow.machine import Machine
    from statebound.flow.states import State
    from statebound.llm.base import LLM

Edge = Decider

__all__ = ["FlowDiagnostic", "check_flow"]


@dataclass(frozen=True, slots=True)
class FlowDiagnostic:
    severity: Literal["warning", "info"]
    code: str
    state: str | None  # None: the flow as a whole
    message: str

    def format(self, flow_name: str) -> str:
        where = flow_name if self.state is None else f"{flow_name}: {self.state}"
        return f"{where}: {self.severity}: {self.message} [{self.code}]"


def check_flow(flow: Machine, llm: LLM | None = None) -> list[FlowDiagnostic]:
    """Every finding about ``flow``: warnings first, then in the order of its states. With the
    ``llm`` it will run on, also what that model could do better (a chooser for a free answer)."""
    found: list[FlowDiagnostic] = []
    if llm is not None:
        found.extend(_free_answers(flow, llm))
    found.extend(_unwritten_reads(flow))
    live = {s.name: _live_edges(s.name, flow.edges[s.name], found) for s in flow.states}
    end = flow.final_states[0]
    for state in flow.states:
        if not state.final and not _always_fires(state, live[state.name]):
            found.append(FlowDiagnostic(
                "warning", "no-default-transition", state.name,
                "if none of its transitions fires, the run ends with an ERROR; add a default as its "
                f"last transition, such as (always(), {end!r})"))
        found.extend(_first_due_fallbacks(state.name, live[state.name]))
    graph = {name: {t for e in edges for t in e.targets} for name, edges in live.items()}
    steps = distances([flow.initial], graph)
    shortest = min((steps[f] for f in flow.final_states if f in steps), default=0)
    if shortest > flow.max_turns:
        found.append(FlowDiagnostic(
            "warning", "turn-limit-too-small", None,
            f"the shortest path from {flow.initial!r} to a final state takes {shortest} transitions "
            f"but max_turns={flow.max_turns}, so no run can finish normally; raise max_turns to at "
            f"least {shortest}"))
    looping = _static_loops(flow, live, found)
    found.extend(_visit_limits(flow))
    for state in flow.states:
        name = state.name
        if name not in looping and name not in flow.visit_limits and name in graph[name]:
            found.append(FlowDiagnostic(
                "info", "unbounded-self-loop", name,
                f"it may transition to itself and has no visit limit, so a run may stay here until "
                f"max_turns ({flow.max_turns}); add visit_limits={{{name!r}: N}} to stop sooner"))
    found.extend(FlowDiagnostic(*finding) for finding in nested_findings(flow, check_flow))
    order = {s.name: i for i, s in enumerate(flow.states)}
    return sorted(found, key=lambda d: (d.severity != "warning", order.get(d.state or "", -1)))


def _visit_limits(flow: Machine) -> list[FlowDiagnostic]:
    """Visit limits that cannot stop a run."""
    found = []
    for name, limit in flow.visit_limits.items():
        most = flow.max_turns + (name == flow.initial)  # entries at turns 0 (initial) or 1..max_turns
        if flow.states_by_name[name].final:
            found.append(FlowDiagnostic(
                "warning", "visit-limit-on-final", name,
                f"visit_limits[{name!r}] has no effect: entering a final state ends the run before "
                "any limit is checked; remove it"))
        elif limit >= most:
            found.append(FlowDiagnostic(
                "info", "visit-limit-never-binds", name,
                f"visit_limits[{name!r}]={limit} can never stop a run: with max_turns="
                f"{flow.max_turns} the state is entered at most {most} times; lower it or remove it"))
    return found


def _first_due_fallbacks(state: str, live: Sequence[Edge]) -> list[FlowDiagnostic]:
    """Where a run goes from a ``first_due`` pipeline none of whose parts is due (its conditions
    may all be false): its ``otherwise``, else the transition after it, else nowhere (an ERROR)."""
    found = []
    for position, edge in enumerate(live):
        if not isinstance(edge, FirstDue) or any(rule.catch_all for _, rule in edge.parts[edge.start:]):
            continue
        parts = ", ".join(target for target, _ in edge.parts[edge.start:]) or "none"
        if edge.otherwise is not None:
            goes = f"goes to {edge.otherwise!r} (its otherwise=)"
        elif position + 1 < len(live):
            goes = f"goes on to the transition after it, {_show(live[position + 1])}"
        else:
            goes = "has no transition left and ends with an ERROR; give it otherwise='State'"
        found.append(FlowDiagnostic(
            "info", "first-due-fallback", state,
            f"when no part of {edge.label!r} is due ({parts}), the run {goes}"))
    return found


def _show(edge: Edge) -> str:
    return f"{edge.label!r} -> {'/'.join(edge.targets)}"


def _live_edges(state: str, edges: Sequence[Edge], found: list[FlowDiagnostic]) -> list[Edge]:
    """The transitions that can fire; reports those after a catch-all or repeating a rule."""
    live: list[Edge] = []
    for edge in edges:
        if live and live[-1].catch_all:
            found.append(FlowDiagnostic(
                "warning", "shadowed-transition", state,
                f"transition {_show(edge)} comes after {_show(live[-1])}, which always fires, so it "
                "can never fire; remove it or move it before that one"))
            continue
        twin = next((e for e in live if isinstance(e, RuleEdge) and isinstance(edge, RuleEdge)
                     and _same(e.rule.test, edge.rule.test)), None)
        if twin is not None:
            found.append(FlowDiagnostic(
                "warning", "duplicate-rule", state,
                f"transition {_show(edge)} repeats the rule of {_show(twin)}, which is tried first, "
                "so it can never fire; remove it or change its rule"))
            continue
        live.append(edge)
    return live


def _always_fires(state: State, live: Sequence[Edge]) -> bool:
    """A catch-all, or tool_ok and tool_failed after a CallTool (its result is ok or failed, and
    only instructions, LLM calls, picks and questions to a person, which add no tool results, may
    follow it)."""
    if any(e.catch_all for e in live):
        return True
    tool = next((o for o in reversed(state.outputs) if not isinstance(o, Instruction | CallLLM | Pick | AskHuman)),
                None)
    if not isinstance(tool, CallTool):
        return False
    statuses = {e.rule.tool_status for e in live if isinstance(e, RuleEdge) and e.rule.tool_status}
    return {ok for name, ok in statuses if name in (None, tool.name)} == {True, False}


def _static_loops(flow: Machine, live: dict[str, list[Edge]], found: list[FlowDiagnostic]) -> set[str]:
    """Report loops of states that add nothing but fixed instructions and whose rules read only
    the history: each pass sees the same history as the last, so a loop once taken repeats."""
    graph: dict[str, set[str]] = {}
    for state in flow.states:
        if not state.final and all(isinstance(o, Instruction) and isinstance(o.text, str)
                                   for o in state.outputs):
            graph[state.name] = set()
            for edge in live[state.name]:
                if not isinstance(edge, RuleEdge) or not edge.rule.history_only:
                    break  # it (and so every later transition) may answer differently next time
                graph[state.name].update(edge.targets)
    # a state without outputs sees the previous state's entry last, so only its self-loop is sure
    static = {n: {t for t in out if t == n or (t in graph and flow.states_by_name[n].outputs)}
              for n, out in graph.items()}
    looping: set[str] = set()
    for name in static:
        if name in looping or name not in reachable(static[name], static):
            continue
        cycle = [n for n in static if n in reachable(static[name], static)
                 and name in reachable(static[n], static)]
        looping.update(cycle)
        where = "it calls no model or tool and may go back to itself" if cycle == [name] else \
            f"states {cycle} call no model or tool and may loop among themselves"
        found.append(FlowDiagnostic(
            "warning", "static-loop", name,
            f"{where}; each pass sees the same history, so once taken the loop repeats until a "
            "limit ends the run; call a model or tool in the loop or change its transitions"))
    return looping


_EMPTY = object()


def _cell(cell: CellType) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _EMPTY


def _same(a: object, b: object, depth: int = 0) -> bool:
    """Whether two tests surely behave alike: the same object, or functions with the same code,
    defaults and (recursively alike) captured values, such as two ``contains('x')``."""
    if a is b:
        return True
    if isinstance(a, Rule) and isinstance(b, Rule):
        return _same(a.test, b.test, depth + 1)
    if isinstance(a, FunctionType) and isinstance(b, FunctionType):
        if depth > 8 or a.__code__ is not b.__code__:
            return False
        return _same((a.__defaults__, a.__kwdefaults__), (b.__defaults__, b.__kwdefaults__), depth + 1) \
            and all(_same(_cell(x), _cell(y), depth + 1)
                    for x, y in zip(a.__closure__ or (), b.__closure__ or ()))
    if callable(a) or callable(b) or type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except Exception:  # an odd __eq__: not surely alike
        return False


def _free_answers(flow: Machine, llm: LLM) -> list[FlowDiagnostic]:
    """LLM-decided transitions that parse a free answer where their model could pick by a chooser."""
    found = []
    for state, decider in _every_edge(flow):
        if not isinstance(decider, LLMChoice) or decider.method != TEXT:
            continue
        model = decider.llm or (state.agent.llm if state.agent is not None else None) or llm
        better = usable(model.capabilities, chat=True)
        if better:
            found.append(FlowDiagnostic(
                "warning", "llm-choice-text", state.name,
                f"its LLM-decided transition parses a free answer (method='text'), which falls back "
                f"when the answer names no state; {model.model} can pick by {better[0]}: "
                f"llm_choice(..., method={better[0]!r}) or 'auto'"))
    return found


def _every_edge(flow: Machine) -> Iterator[tuple[State, Edge]]:
    """Each state's compiled transitions, with their state, in the flow's order."""
    for state in flow.states:
        for edge in flow.edges[state.name]:
            yield state, edge


def _unwritten_reads(flow: Machine) -> list[FlowDiagnostic]:
    """Transitions that read a flow variable no output function declares it writes: it keeps its
    initial value, so the condition always gives the same answer."""
    if flow.vars is None:
        return []
    written = {name for state in flow.states for output in state.outputs for name in output.writes}
    found = []
    for state, edge in _every_edge(flow):
        for name in sorted(set(edge.reads) - written):
            found.append(FlowDiagnostic(
                "warning", "unwritten-variable", state.name,
                f"transition {edge.label!r} reads vars.{name}, which no output writes, so it keeps its "
                f"initial value; write it (Pick(into={name!r}), Update(fn, writes=[{name!r}]), "
                f"CallTool(fn, writes=[{name!r}]))"))
    return found
