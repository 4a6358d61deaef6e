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

__all__ = ["Visits", "diagram_svg", "visits"]

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
    dot = _flow_dot(benchmark, json.dumps(dict(options), sort_keys=True, default=str), agent, task, max_turns)
    if dot is None or shutil.which("dot") is None:
        return None
    marks = [f'    "{_dot_name(state)}" [style="rounded,filled", fillcolor="#ffe08a", xlabel="x{count}"];'
             for state, count in counts.items()]
    edges = [_EDGE_LABEL.sub(";", line) for line in dot.rstrip().removesuffix("}").splitlines()]  # the table has them
    source = "\n".join([*edges, *marks, "}"]) + "\n"
    try:
        drawn = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True, timeout=20, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    svg = drawn.stdout
    return svg[svg.find("<svg"):] if "<svg" in svg else None


@lru_cache(maxsize=32)
def _flow_dot(benchmark: str, options: str, agent: str, task: str, max_turns: int | None) -> str | None:
    """The agent's flow as DOT, built as the harness builds it for ``task`` (cached per agent)."""
    from statebound.bench.registry import benchmark_names, load_benchmark
    from statebound.contract.benchmark import Setup
    from statebound.flow.draw import to_dot
    from statebound.flow.machine import Machine

    if benchmark not in benchmark_names():
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
