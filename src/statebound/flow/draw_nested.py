"""Diagrams of flows that run other flows: each state whose output runs sub-machines or parallel
branches (:class:`~statebound.flow.outputs.nesting.Nested`) gets a cluster holding their
diagrams: a Mermaid composite state (parallel branches as its concurrent regions, ``--``) or a DOT
``cluster`` subgraph. ``nested=False`` collapses them: the diagram of :mod:`statebound.flow.draw`.
"""

from __future__ import annotations

from collections.abc import Iterator

from statebound.flow import draw
from statebound.flow.draw import _dot_text, _mermaid_id, _mermaid_text, arrows, output_labels
from statebound.flow.machine import Machine
from statebound.flow.outputs.nesting import Child, Nested

__all__ = ["to_dot", "to_mermaid"]


def _nested(flow: Machine) -> Iterator[tuple[str, Nested]]:
    """Each state's outputs that run other flows."""
    for state in flow.states:
        yield from ((state.name, output) for output in state.outputs if isinstance(output, Nested))


def _title(flow: Machine, state: str) -> str:
    detail = " -> ".join(output_labels(flow, state, detailed=True))
    return state + (f" ({detail})" if detail else "")


def to_mermaid(flow: Machine, *, reads_writes: bool = False, nested: bool = True) -> str:
    """:func:`statebound.flow.draw.to_mermaid`, with a composite state per sub-machine cluster."""
    text = draw.to_mermaid(flow, reads_writes=reads_writes)
    clusters = [line for state, output in _nested(flow) for line in _mermaid_cluster(state, output, "", 1)]
    return text + "\n".join(clusters) + "\n" if nested and clusters else text


def _mermaid_cluster(state: str, output: Nested, prefix: str, depth: int) -> list[str]:
    pad = "    " * depth
    lines = [f"{pad}state {_mermaid_id(prefix + state)} {{"]
    for number, child in enumerate(output.children()):
        if number and output.concurrent:
            lines.append(f"{pad}    --")
        lines += _mermaid_child(child, f"{prefix}{state}__{child.key}__".replace("*", "each"), depth + 1)
    return [*lines, f"{pad}}}"]


def _mermaid_child(child: Child, prefix: str, depth: int) -> list[str]:
    flow, pad = child.flow, "    " * depth
    lines = [f"{pad}[*] --> {_mermaid_id(prefix + flow.initial)}"]
    for state in flow.states:
        lines.append(f'{pad}state "{_mermaid_text(_title(flow, state.name))}" as {_mermaid_id(prefix + state.name)}')
    for source, target, label in arrows(flow):
        lines.append(f"{pad}{_mermaid_id(prefix + source)} --> {_mermaid_id(prefix + target)}: {_mermaid_text(label)}")
    lines += [f"{pad}{_mermaid_id(prefix + name)} --> [*]" for name in flow.final_states]
    for name, output in _nested(flow):
        lines += _mermaid_cluster(name, output, prefix, depth)
    return lines


def to_dot(flow: Machine, *, reads_writes: bool = False, nested: bool = True) -> str:
    """:func:`statebound.flow.draw.to_dot`, with a ``cluster`` subgraph per sub-machine, joined
    to its state by a dashed arrow."""
    text = draw.to_dot(flow, reads_writes=reads_writes)
    clusters = [line for state, output in _nested(flow) for line in _dot_cluster(state, output, "", 1)]
    if not nested or not clusters:
        return text
    return text.removesuffix("}\n") + "\n".join(clusters) + "\n}\n"


def _dot_cluster(state: str, output: Nested, prefix: str, depth: int) -> list[str]:
    pad, node = "    " * depth, prefix + state
    lines = [f'{pad}subgraph "cluster_{_dot_text(node)}" {{', f'{pad}    label="{_dot_text(output.label)}";',
             f"{pad}    style=dashed;"]
    for child in output.children():
        inner = f"{node}/{child.key}/"
        lines += [f'{pad}    subgraph "cluster_{_dot_text(inner)}" {{', f'{pad}        label="{_dot_text(child.key)}";']
        lines += _dot_child(child.flow, inner, depth + 2)
        lines.append(f"{pad}    }}")
        lines.append(f'{pad}    "{_dot_text(node)}" -> "{_dot_text(inner + child.flow.initial)}" [style=dashed];')
    return [*lines, f"{pad}}}"]


def _dot_child(flow: Machine, prefix: str, depth: int) -> list[str]:
    pad = "    " * depth
    lines = []
    for state in flow.states:
        shape = ", shape=doublecircle" if state.final else ""
        lines.append(f'{pad}"{_dot_text(prefix + state.name)}" [label="{_dot_text(_title(flow, state.name))}"{shape}];')
    for source, target, label in arrows(flow):
        lines.append(f'{pad}"{_dot_text(prefix + source)}" -> "{_dot_text(prefix + target)}" [label="{_dot_text(label)}"];')
    for name, output in _nested(flow):
        lines += _dot_cluster(name, output, prefix, depth)
    return lines
