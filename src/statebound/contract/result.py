"""One finished episode as the harness stores it: :class:`EpisodeResult`, built once per episode by
:mod:`statebound.bench.episode` and read back from the run store by reports."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from statebound.exits import ExitReason

__all__ = ["CALLS_KEY", "VARS_KEY", "EpisodeResult"]

VARS_KEY = "flow_vars"  # meta: a flow's variables where the episode ended (the viewer shows them)
CALLS_KEY = "model_calls"  # meta: a flow's model calls, each with its state, tokens and seconds


@dataclass(frozen=True, slots=True, kw_only=True)
class EpisodeResult:
    """The row of ``results.jsonl`` plus the episode's trajectory and events.

    ``turns`` are the actions the agent took and ``error_rate`` the failed share of them (each
    benchmark's docs say what counts); usage and cost are what the harness metered (``cost_usd`` is
    ``None`` when a model called has no price in :mod:`statebound.llm.pricing`); ``error`` is set
    when the episode crashed; ``meta`` holds breakdown keys and the benchmark's and agent's own
    figures; ``trajectory`` is the agent's trace in stored form (JSON objects); ``task_text`` is
    what the environment's reset showed the agent and ``env_steps`` the actions it was sent, each with
    what was offered before it (:class:`~statebound.contract.trace.Step` in stored form; empty for
    runs stored before the harness kept them)."""

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
    cost_usd: float | None = 0.0
    exit_state: str | None = None
    exit_reason: ExitReason = ExitReason.FINAL
    wall_seconds: float = 0.0
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    task_text: str | None = None
    env_steps: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.exit_reason, ExitReason):  # a stored row: read older words too
            object.__setattr__(self, "exit_reason", ExitReason.parse(str(self.exit_reason)))

    def row(self) -> dict[str, Any]:
        """The flat summary written to ``results.jsonl`` (no trajectory, no events)."""
        data = {name: getattr(self, name) for name in _SCALAR_FIELDS}
        data["exit_reason"] = self.exit_reason.value
        data["meta"] = dict(self.meta)
        return data


_SCALAR_FIELDS = tuple(f.name for f in fields(EpisodeResult)
                       if f.name not in ("meta", "trajectory", "events", "task_text", "env_steps"))
