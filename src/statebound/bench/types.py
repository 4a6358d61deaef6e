"""Shared types between benchmarks and the harness that runs them.

A :class:`Benchmark` knows its tasks and agents and runs one episode; the harness (runner, store,
reports) knows nothing of any particular benchmark beyond this contract.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol, runtime_checkable

from statebound.llm.base import LLM


@dataclass(frozen=True, slots=True)
class Task:
    """One benchmark task. ``meta`` carries breakdown keys such as ``hardness`` or ``task_type``."""

    id: str
    question: str
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class EpisodeLimits:
    max_turns: int = 10
    max_tokens: int | None = None  # total prompt+completion tokens for the episode
    timeout_s: float | None = None  # wall-clock limit for the episode


@dataclass(slots=True, kw_only=True)
class EpisodeResult:
    """One finished episode: the row of ``results.jsonl`` plus its trajectory and events."""

    task: str
    agent: str
    model: str
    seed: int = 0
    reward: float = 0.0
    success: bool = False
    turns: int = 0
    error_rate: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_calls: int = 0
    cost_usd: float = 0.0
    exit_state: str | None = None
    exit_reason: str = ""
    wall_seconds: float = 0.0
    error: str | None = None  # set when the episode crashed (harness-level failure)
    meta: dict[str, Any] = field(default_factory=dict)  # hardness, task type, monitor counts, ...
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        """The flat summary written to ``results.jsonl`` (no trajectory, no events).

        ``meta`` is a shallow copy: the row is meant for serialization (see
        :func:`statebound.bench.jsonio.dumps`, which also writes dataclasses in it as objects)."""
        data = {name: getattr(self, name) for name in _SCALAR_FIELDS}
        data["meta"] = dict(self.meta)
        return data


_SCALAR_FIELDS = tuple(f.name for f in fields(EpisodeResult) if f.name not in ("meta", "trajectory", "events"))


@runtime_checkable
class Benchmark(Protocol):
    """A dataset plus the agents that can run on it."""

    name: str

    def tasks(self) -> Sequence[Task]:
        """All tasks in a stable order."""
        ...

    def agents(self) -> Sequence[str]:
        """Names of the agents this benchmark can run."""
        ...

    async def run_episode(
        self, task: Task, agent: str, llm: LLM, *, seed: int, limits: EpisodeLimits
    ) -> EpisodeResult:
        """Run ``agent`` on ``task`` with ``llm`` and grade it. Must not share state between calls."""
        ...
