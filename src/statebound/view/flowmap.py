"""An episode's way through its state machine: the states it entered and the transitions it took,
counted from its events, and (when the agent is a flow that can be built again from the run's
configuration and Graphviz's ``dot`` is installed) the flow's diagram with those states
highlighted and counted (:func:`statebound.flow.draw.to_dot`)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from statebound.contract.result import EpisodeResult

__all__ = ["Visits", "diagram_svg", "local_ref", "signature_svg", "visits"]

_EDGE_LABEL = re.compile(r' \[label="(?:[^"\\]|\\.)*"\];$')


@dataclass(frozen=True, slots=True)
class Visits:
    """States entered (in first-entered order) and transitions taken, with counts."""

    states: dict[str, int]
    transitions: list[tuple[str, str, str, int]]  # source, target, reason, count


def visits(result: EpisodeResult) -> Visits:
    """Counted from the episode's events; from its trajectory's states when it has no events."""
    states: Counter[str] = Counter()
    moves: Counter[tuple[str, str, str]] = Counter()
    for event in result.events:
        if event.get("kind") == "state_entered":
            states[str(event.get("state"))] += 1
        elif event.get("kind") == "transition_taken":
            moves[(str(event.get("source")), str(event.get("target")), str(event.get("reason", "")))] += 1
    if not states:
        previous = None
        for item in result.trajectory:
            if (state := item.get("state")) is not None and state != previous:
                states[str(state)] += 1
            previous = state
    return Visits(dict(states), [(s, t, r, n) for (s, t, r), n in moves.items()])


def _dot_name(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"')


def diagram_svg(benchmark: str, options: Mapping[str, Any], agent: str, task: str, max_turns: int | None,
                counts: Mapping[str, int], *, stored: str | None = None) -> str | None:
    """The agent's flow as SVG with the visited states filled and labelled ``xN``: ``stored``, the
    DOT the run kept when it was made, else drawn from the installed code of a registered
    benchmark and agent (a user's file is never run to draw it); ``None`` when the agent is not a
    flow, or ``dot`` is missing or fails."""
    dot = stored
    if dot is None and local_ref(benchmark) is not None and local_ref(agent) is not None:
        dot = _flow_dot(benchmark, json.dumps(dict(options), sort_keys=True, default=str), agent, task, max_turns)
    if dot is None:
        return None
    edges = [_EDGE_LABEL.sub(";", line) for line in dot.rstrip().removesuffix("}").splitlines()]  # the table has them
    return _svg([*edges, *_marks(counts)])


def signature_svg(signature: str, way: Visits, current: str | None) -> str | None:
    """A stored thread's flow as SVG: its states as the store remembers them (each with its output
    functions; final ones drawn as double circles), the transitions the thread took (with how
    often), the visited states filled and labelled ``xN``, the state it stands in outlined;
    ``None`` when the signature cannot be read or ``dot`` is missing or fails."""
    try:
        stored = json.loads(signature)
        states = {str(name): shape for name, shape in stored["states"].items()}
        initial = str(stored["initial"])
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    lines = ["digraph flow {", "    rankdir=LR;", "    node [shape=box, style=rounded];",
             '    "__start__" [shape=point];', f'    "__start__" -> "{_dot_name(initial)}";']
    for name, shape in states.items():
        outputs = " -> ".join(str(label) for label in (shape.get("outputs") or ()))
        label = _dot_name(name) + (f"\\n{_dot_name(outputs)}" if outputs else "")
        lines.append(f'    "{_dot_name(name)}" [label="{label}"{", shape=doublecircle" if shape.get("final") else ""}];')
    for source, target, _, count in way.transitions:
        lines.append(f'    "{_dot_name(source)}" -> "{_dot_name(target)}" [label="x{count}"];')
    if current is not None:
        lines.append(f'    "{_dot_name(current)}" [penwidth=3];')
    return _svg([*lines, *_marks(way.states)])


def _marks(counts: Mapping[str, int]) -> list[str]:
    return [f'    "{_dot_name(state)}" [style="rounded,filled", fillcolor="#ffe08a", xlabel="x{count}"];'
            for state, count in counts.items()]


def _svg(lines: list[str]) -> str | None:
    """The DOT ``lines`` (a graph without its closing brace) drawn as SVG by Graphviz's ``dot``."""
    if shutil.which("dot") is None:
        return None
    source = "\n".join([*lines, "}"]) + "\n"
    try:
        drawn = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    svg = drawn.stdout
    return svg[svg.find("<svg"):] if "<svg" in svg else None


def local_ref(ref: str) -> str | None:
    """``ref`` when the viewer may run its code to draw or preview it (a registered benchmark or
    agent, installed here), ``None`` for a user's file (``path.py:name``): reading a run never runs
    a file it names (the run stored what the viewer needs of it)."""
    from statebound.user_files import is_file_ref

    return None if is_file_ref(ref) else ref


@lru_cache(maxsize=32)
def _flow_dot(benchmark: str, options: str, agent: str, task: str, max_turns: int | None) -> str | None:
    """The registered agent's flow as DOT, built as the harness builds it for ``task`` (cached)."""
    from statebound.bench.diagrams import flow_dot
    from statebound.bench.registry import benchmark_names, load_benchmark

    if benchmark not in benchmark_names():
        return None
    try:
        loaded = load_benchmark(benchmark, json.loads(options))
        found = next((t for t in loaded.benchmark.tasks() if t.id == task), None)
    except Exception:  # noqa: BLE001 - no diagram then: the visits are listed anyway
        return None
    return None if found is None else flow_dot(loaded, agent, found, max_turns)
