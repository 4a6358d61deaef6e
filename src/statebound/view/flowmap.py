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
from pathlib import Path
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
                counts: Mapping[str, int]) -> str | None:
    """The agent's flow as SVG with the visited states filled and labelled ``xN``; ``None`` when
    the agent is not a flow built from the configuration, or ``dot`` is missing or fails."""
    local_benchmark, local_agent = local_ref(benchmark), local_ref(agent)
    if local_benchmark is None or local_agent is None:
        return None
    dot = _flow_dot(local_benchmark, json.dumps(dict(options), sort_keys=True, default=str), local_agent, task,
                    max_turns)
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


def local_ref(ref: str, root: Path | None = None) -> str | None:
    """``ref`` as the viewer may load it: a registered name as it is; ``path.py:name`` with its
    path made absolute when the file lies under ``root`` (the working directory: where ``statebound
    eval`` ran, so a run's relative paths resolve); ``None`` for a file elsewhere, whose code a
    store naming it should not get to run."""
    from statebound.user_files import is_file_ref

    if not is_file_ref(ref):
        return ref
    path, _, name = ref.rpartition(":")
    base = (root or Path.cwd()).resolve()
    found = (base / path).resolve()
    return f"{found}:{name}" if found.is_file() and found.is_relative_to(base) else None


@lru_cache(maxsize=32)
def _flow_dot(benchmark: str, options: str, agent: str, task: str, max_turns: int | None) -> str | None:
    """The agent's flow as DOT, built as the harness builds it for ``task`` (cached per agent;
    ``benchmark`` and ``agent`` registered names, or files as :func:`local_ref` gives them)."""
    from statebound.bench.registry import benchmark_names, load_benchmark
    from statebound.contract.benchmark import Setup
    from statebound.flow.draw import to_dot
    from statebound.flow.machine import Machine
    from statebound.user_files import is_file_ref

    if not is_file_ref(benchmark) and benchmark not in benchmark_names():
        return None
    try:
        loaded = load_benchmark(benchmark, json.loads(options))
        found = next((t for t in loaded.benchmark.tasks() if t.id == task), None)
        if found is None:
            return None
        turns = max_turns if max_turns is not None else loaded.benchmark.default_max_turns
        built = loaded.agent(agent).build(Setup(options=loaded.benchmark.options, task=found, seed=0,
                                                max_turns=turns))
    except Exception:  # noqa: BLE001 - no diagram then: the visits are listed anyway
        return None
    flow = getattr(built, "flow", None)
    return to_dot(flow) if isinstance(flow, Machine) else None
