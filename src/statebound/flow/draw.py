"""Diagrams of a Flow: Mermaid (``stateDiagram-v2``) and Graphviz DOT.

A state shows what its output functions are (``Pick(table, auto) -> Update(start)``) and, asked
for, the flow variables it reads and writes. Transitions between the same two states are one
arrow; a :func:`~statebound.flow.rules.first_due` pipeline is one group (a choice node) that
every state entering it points at, whose arrows lead to its parts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from statebound.flow.rules import FirstDue

if TYPE_CHECKING:
    from statebound.flow.machine import Machine

__all__ = ["arrows", "output_labels", "state_reads", "state_writes", "to_dot", "to_mermaid"]

Arrow = tuple[str, str, str]  # source, target, label (a group's node is named after the group)


def output_labels(flow: Machine, state: str, *, detailed: bool = False) -> list[str]:
    """Short names of a state's output functions, e.g. ``["Instruction", "LLM", "Tool(run_sql)"]``;
    ``detailed``: as diagrams show them (``LLM(schema=BugReport)``), where an output has its own."""
    outputs = flow.states_by_name[state].outputs
    return [output.detail if detailed else output.label for output in outputs]


def state_writes(flow: Machine, state: str) -> tuple[str, ...]:
    """The flow variables a state's output functions declare they write."""
    return tuple(dict.fromkeys(name for output in flow.states_by_name[state].outputs for name in output.writes))


def state_reads(flow: Machine, state: str) -> tuple[str, ...]:
    """The flow variables a state's output functions and transitions read (as they declare, or,
    for a rule, as its code shows)."""
    outputs = (name for output in flow.states_by_name[state].outputs for name in output.reads)
    edges = (name for edge in flow.edges[state] for name in edge.reads)
    return tuple(dict.fromkeys((*outputs, *edges)))


def arrows(flow: Machine) -> list[Arrow]:
    """The diagram's arrows: each state's to its targets (one arrow per pair of states, the
    transitions' labels joined), and each pipeline group's to its parts, drawn once."""
    labels: dict[tuple[str, str], list[str]] = {}
    for source, target, label in _transitions(flow):
        shown = labels.setdefault((source, target), [])
        if label not in shown:
            shown.append(label)
    return [(source, target, " / ".join(shown)) for (source, target), shown in labels.items()]


def _transitions(flow: Machine) -> Iterator[Arrow]:
    groups: dict[int, FirstDue] = {}
    for state in flow.states:
        for edge in flow.edges[state.name]:
            if isinstance(edge, FirstDue):
                groups.setdefault(id(edge.group), edge.group)
                yield state.name, _group_node(edge.group), edge.label
            else:
                yield from ((state.name, target, edge.label) for target in edge.targets)
    for group in groups.values():
        yield from ((_group_node(group), target, rule.label) for target, rule in group.parts)
        if group.otherwise is not None:
            yield _group_node(group), group.otherwise, "none due"


def _group_node(group: FirstDue) -> str:
    return f"({group.name})"


def _groups(flow: Machine) -> list[str]:
    return list(dict.fromkeys(_group_node(edge.group) for state in flow.states for edge in flow.edges[state.name]
                              if isinstance(edge, FirstDue)))


def _vars_shown(flow: Machine, state: str) -> list[str]:
    """``reads: a, b`` and ``writes: c``, those a state has."""
    reads, writes = state_reads(flow, state), state_writes(flow, state)
    return [f"{what}: {', '.join(names)}" for what, names in (("reads", reads), ("writes", writes)) if names]


def _mermaid_id(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def _mermaid_text(text: str) -> str:
    return text.replace(":", "#58;").replace('"', "#quot;").replace("\n", " ")


def to_mermaid(flow: Machine, *, reads_writes: bool = False) -> str:
    """A Mermaid ``stateDiagram-v2``; ``reads_writes``: each state also shows the flow variables
    it reads and writes."""
    lines = ["stateDiagram-v2", f"    [*] --> {_mermaid_id(flow.initial)}"]
    for state in flow.states:
        detail = " -> ".join(output_labels(flow, state.name, detailed=True))
        title = "; ".join([state.name + (f" ({detail})" if detail else ""),
                           *(_vars_shown(flow, state.name) if reads_writes else [])])
        lines.append(f'    state "{_mermaid_text(title)}" as {_mermaid_id(state.name)}')
    lines += [f"    state {_mermaid_id(group)} <<choice>>" for group in _groups(flow)]
    for source, target, label in arrows(flow):
        lines.append(f"    {_mermaid_id(source)} --> {_mermaid_id(target)}: {_mermaid_text(label)}")
    for name in flow.final_states:
        lines.append(f"    {_mermaid_id(name)} --> [*]")
    return "\n".join(lines) + "\n"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def to_dot(flow: Machine, *, reads_writes: bool = False) -> str:
    """A Graphviz DOT digraph; ``reads_writes``: each state also shows the flow variables it reads
    and writes."""
    lines = [f'digraph "{_dot_text(flow.name)}" {{', "    rankdir=LR;", '    node [shape=box, style=rounded];']
    lines.append('    "__start__" [shape=point];')
    lines.append(f'    "__start__" -> "{_dot_text(flow.initial)}";')
    for state in flow.states:
        outputs = " -> ".join(output_labels(flow, state.name, detailed=True))
        lines_of = [state.name, *([outputs] if outputs else []), *(_vars_shown(flow, state.name) if reads_writes else [])]
        label = "\\n".join(_dot_text(part) for part in lines_of)
        shape = ", shape=doublecircle" if state.final else ""
        lines.append(f'    "{_dot_text(state.name)}" [label="{label}"{shape}];')
    lines += [f'    "{_dot_text(group)}" [shape=diamond];' for group in _groups(flow)]
    for source, target, label in arrows(flow):
        lines.append(f'    "{_dot_text(source)}" -> "{_dot_text(target)}" [label="{_dot_text(label)}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
