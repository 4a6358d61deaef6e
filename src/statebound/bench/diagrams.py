"""An agent's flow as a diagram, built as the harness builds it for a task: stored with the run
when it is made, so that reading the run later (the viewer) never runs a user's file to draw it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from statebound.contract.benchmark import Setup

if TYPE_CHECKING:
    from collections.abc import Sequence

    from statebound.bench.registry import LoadedBenchmark
    from statebound.bench.store import RunStore
    from statebound.contract.benchmark import Task

__all__ = ["flow_dot", "store_diagrams"]


def flow_dot(loaded: LoadedBenchmark, agent: str, task: Task, max_turns: int | None) -> str | None:
    """``agent``'s flow for ``task`` as DOT; ``None`` when the agent is not a flow (or fails to
    build: the run itself says why)."""
    from statebound.flow.draw import to_dot
    from statebound.flow.machine import Machine

    turns = max_turns if max_turns is not None else loaded.benchmark.default_max_turns
    try:
        built = loaded.agent(agent).build(Setup(options=loaded.benchmark.options, task=task, seed=0, max_turns=turns))
    except Exception:  # noqa: BLE001 - no diagram then: the episodes say what went wrong
        return None
    flow = getattr(built, "flow", None)
    return to_dot(flow) if isinstance(flow, Machine) else None


def store_diagrams(store: RunStore, loaded: LoadedBenchmark, agents: Sequence[str], task: Task,
                   max_turns: int | None) -> None:
    """Each flow agent's diagram, built for ``task``, stored with the run once (a run grown later
    keeps the first)."""
    stored = store.diagrams()
    for agent in agents:
        if agent not in stored and (dot := flow_dot(loaded, agent, task, max_turns)) is not None:
            store.save_diagram(agent, dot)
