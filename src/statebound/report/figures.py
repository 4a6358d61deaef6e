"""Per-state figures of a trajectory: visits and tokens per state, and states in order of appearance.

A choice state (:class:`statebound.flow.Pick`) records each choice on its entry, under ``choice``.

Visits come from the episode's ``state_entered`` events when it has them (a state that transitions
to itself is visited again); otherwise a visit starts at every entry whose state differs from the
previous entry's state. Tokens per state add up the usage on entries of that state.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["StateFigures", "choices_made", "state_figures", "states_in_order"]


@dataclass(frozen=True, slots=True)
class StateFigures:
    """Per-state counts for one trajectory."""

    visits: Mapping[str, int]
    prompt_tokens: Mapping[str, int]
    completion_tokens: Mapping[str, int]


def state_figures(
    trajectory: Sequence[Mapping[str, Any]], events: Sequence[Mapping[str, Any]] = ()
) -> StateFigures:
    """Visits and tokens per state (entries without a state are skipped)."""
    visits: Counter[str] = Counter()
    prompt: Counter[str] = Counter()
    completion: Counter[str] = Counter()
    previous: str | None = None
    for item in trajectory:
        state = item.get("state")
        if state is None:
            previous = None
            continue
        if state != previous:
            visits[state] += 1
        previous = state
        prompt[state] += int(item.get("prompt_tokens") or 0)
        completion[state] += int(item.get("completion_tokens") or 0)
    entered = Counter(str(e["state"]) for e in events if e.get("kind") == "state_entered")
    return StateFigures(dict(entered or visits), dict(prompt), dict(completion))


def states_in_order(trajectories: Iterable[Sequence[Mapping[str, Any]]]) -> list[str]:
    """Every state name seen, in order of first appearance."""
    seen: dict[str, None] = {}
    for trajectory in trajectories:
        for item in trajectory:
            if item.get("state") is not None:
                seen.setdefault(item["state"], None)
    return list(seen)


def choices_made(trajectory: Iterable[Mapping[str, Any]]) -> int:
    """How many choices a choice state made in the trajectory (entries carrying a ``choice``)."""
    return sum(isinstance(item.get("choice"), Mapping) for item in trajectory)
