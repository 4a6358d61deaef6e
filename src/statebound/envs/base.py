"""The contract every tool environment implements (SQL, Bash sandbox, ALFWorld, QA tools).

Environments are synchronous; async callers run them with ``asyncio.to_thread``. One instance
serves one episode at a time: ``reset`` starts an episode, ``step`` acts, ``score`` grades it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class StepResult:
    """The outcome of one action."""

    observation: str
    ok: bool = True  # the action ran without error (what rule-based transitions look at)
    done: bool = False  # the episode is over (e.g. after ``submit``)
    info: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Score:
    """How an episode went, in the benchmark's own terms."""

    reward: float
    success: bool
    metrics: Mapping[str, float] = field(default_factory=dict)  # e.g. {"error_rate": 0.25}


@runtime_checkable
class Environment(Protocol):
    def reset(self, task_id: str) -> str:
        """Start an episode on ``task_id``; return the task text shown to the agent."""
        ...

    def step(self, action: str) -> StepResult:
        """Carry out one action written by the agent."""
        ...

    def score(self) -> Score:
        """Grade the episode as it stands."""
        ...

    def close(self) -> None:
        """Release everything the environment holds (connections, sandboxes, processes)."""
        ...


@runtime_checkable
class OffersActions(Protocol):
    """An environment that can list the actions it would accept now (ALFWorld's admissible
    commands). The harness notes them beside every action an agent sends
    (:class:`statebound.contract.trace.Step`), whatever the agent."""

    def offered_actions(self) -> Sequence[str] | None:
        """The actions it would accept now, in the form an agent writes them; ``None`` when it
        cannot list them (not asked to, say)."""
        ...
