"""What an agent returns for one episode: a typed :class:`Trace`.

A trace lists what happened in order (:class:`TraceEntry`: the state it happened in, who said it,
the text, the usage of the model call behind it, and anything else worth keeping, such as the
action sent or a choice's candidates), how the episode ended (one :class:`ExitReason` for every
benchmark) and the agent's answer when it gives one. The harness stores it with the episode;
:mod:`statebound.contract.converters` makes traces from flow runs, monitor runs and chain-of-states
loops.

Beside the trace, whatever the agent, the harness keeps the environment's side of the episode: each
action sent with the candidates the environment offered just before it (:class:`Step`; ALFWorld's
admissible commands), so that any stored run can teach a machine (:mod:`statebound.induce`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from statebound.exits import ExitReason
from statebound.llm.base import Usage

__all__ = ["ExitReason", "Step", "Trace", "TraceEntry", "TraceRole"]

TraceRole = Literal["system", "user", "assistant", "tool"]

@dataclass(frozen=True, slots=True, kw_only=True)
class TraceEntry:
    """One thing that happened. ``role``: ``user`` (task, instructions, observations shown to the
    model), ``assistant`` (the model's text), ``tool`` (an environment's or tool's output) or
    ``system``; ``source`` says more where the agent knows it (``task``, ``instruction``, ``llm``,
    ``tool``); ``data``: plain JSON values kept beside the text (``action``, ``choice``...)."""

    state: str | None
    role: TraceRole
    content: str
    source: str | None = None
    name: str | None = None
    ok: bool | None = None
    usage: Usage | None = None
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The stored form: one flat JSON object (``data``'s keys beside the fields)."""
        item: dict[str, Any] = {"state": self.state, "role": self.role, "content": self.content}
        for key in ("source", "name", "ok"):
            if (value := getattr(self, key)) is not None:
                item[key] = value
        if self.usage is not None:
            item["prompt_tokens"] = self.usage.prompt_tokens
            item["completion_tokens"] = self.usage.completion_tokens
        item.update(self.data)
        return item


@dataclass(frozen=True, slots=True, kw_only=True)
class Trace:
    """One episode as the agent saw it.

    ``exit`` says how it ended and ``exit_state`` where (a flow's state, a spec's state); ``usage``
    and ``cost_usd`` are what the agent's own model calls used (the harness meters them too);
    ``error`` describes a failure the agent caught and reported (``exit`` is then ``ERROR``);
    ``events`` are a flow's events as JSON objects; ``meta`` holds the agent's own figures
    (monitor counts, state-tracking checks...), stored with the episode's results.
    """

    entries: tuple[TraceEntry, ...]
    exit: ExitReason
    exit_state: str | None = None
    answer: str | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    error: str | None = None
    events: tuple[Mapping[str, Any], ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dicts(self) -> list[dict[str, Any]]:
        """The entries in their stored form."""
        return [entry.to_dict() for entry in self.entries]


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One action an agent sent to its environment, as the harness saw it pass: ``offered`` are the
    candidates the environment listed just before (its admissible actions; ``None`` when it lists
    none), then the action as sent and what came back."""

    action: str
    observation: str
    ok: bool
    offered: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The stored form (``offered`` left out when the environment listed none)."""
        item: dict[str, Any] = {"action": self.action, "observation": self.observation, "ok": self.ok}
        if self.offered is not None:
            item["offered"] = list(self.offered)
        return item

    @classmethod
    def from_dict(cls, item: Mapping[str, Any]) -> Step:
        offered: Sequence[str] | None = item.get("offered")
        return cls(action=str(item["action"]), observation=str(item.get("observation", "")), ok=bool(item.get("ok", True)),
                   offered=None if offered is None else tuple(str(o) for o in offered))
