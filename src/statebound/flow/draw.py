"""Diagrams of a Flow: Mermaid (``stateDiagram-v2``) and Graphviz DOT."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from statebound.flow.machine import Machine

__all__ = ["output_labels", "to_dot", "to_mermaid"]


def output_labels(flow: Machine, state: str, *, detailed: bool = False) -> list[str]:
    """Short names of a state's output functions, e.g. ``["Instruction", "LLM", "Tool(run_sql)"]``;
    ``detailed``: as diagrams show them (``LLM(schema=BugReport)``), where an output has its own."""
    outputs = flow.states_by_name[state].outputs
    return [str(getattr(o, "diagram_label" if detailed and hasattr(o, "diagram_label") else "label", type(o).__name__))
            for o in outputs]


def _edges(flow: Machine) -> list[tuple[str, str, str]]:
    edges: list[tuple[str, str, str]] = []
    for state in flow.states:
        for edge in flow.edges[state.name]:
            for target in edge.targets:
                edges.append((state.name, target, edge.label))
    return edges


def _mermaid_id(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def _mermaid_text(text: str) -> str:
    return text.replace(":", "#58;").replace('"', "#quot;").replace("\n", " ")


def to_mermaid(flow: Machine) -> str:
    lines = ["stateDiagram-v2", f"    [*] --> {_mermaid_id(flow.initial)}"]
    for state in flow.states:
        sid = _mermaid_id(state.name)
        outputs = output_labels(flow, state.name, detailed=True)
        detail = " -> ".join(outputs)
        title = state.name + (f" ({detail})" if detail else "")
        lines.append(f'    state "{_mermaid_text(title)}" as {sid}')
    for source, target, label in _edges(flow):
        lines.append(f"    {_mermaid_id(source)} --> {_mermaid_id(target)}: {_mermaid_text(label)}")
    for name in flow.final_states:
        lines.append(f"    {_mermaid_id(name)} --> [*]")
    return "\n".join(lines) + "\n"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def to_dot(flow: Machine) -> str:
    lines = [f'digraph "{_dot_text(flow.name)}" {{', "    rankdir=LR;", '    node [shape=box, style=rounded];']
    lines.append('    "__start__" [shape=point];')
    lines.append(f'    "__start__" -> "{_dot_text(flow.initial)}";')
    for state in flow.states:
        outputs = " -> ".join(output_labels(flow, state.name, detailed=True))
        label = state.name + (f"\\n{_dot_text(outputs)}" if outputs else "")
        shape = ", shape=doublecircle" if state.final else ""
        lines.append(f'    "{_dot_text(state.name)}" [label="{label}"{shape}];')
    for source, target, label in _edges(flow):
        lines.append(f'    "{_dot_text(source)}" -> "{_dot_text(target)}" [label="{_dot_text(label)}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
