"""How often the model goes round in circles: the same reply written again and again.

Greedy decoding of a small model often repeats a reply that failed, word for word, until the turn
limit; a success rate alone does not show it. From each episode's trajectory (its ``assistant``
entries, compared without surrounding whitespace) this module measures:

- ``stuck``: the share of episodes with a run of at least :data:`STUCK_RUN` identical replies;
- ``longest``: the mean over episodes of the longest such run (1 when no reply repeats);
- ``repeated``: the share of replies that equal the reply just before them in the episode.

Episodes without model replies (a model-free control's random picks are not replies; crashes
before the first call) are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from statebound.contract.columns import group_value
from statebound.contract.result import EpisodeResult

__all__ = ["STUCK_RUN", "Repetition", "longest_repeat", "replies", "summarize_repetition"]

STUCK_RUN = 3  # identical replies in a row that count an episode as stuck


def replies(trajectory: Iterable[Mapping[str, Any]]) -> list[str]:
    """The model's replies in order, without surrounding whitespace (a pick the model did not make,
    at random or among a single candidate, is not one)."""
    return [str(item.get("content", "")).strip() for item in trajectory
            if item.get("role") == "assistant" and not _picked_without_model(item.get("choice"))]


def _picked_without_model(choice: Any) -> bool:
    return isinstance(choice, Mapping) and (choice.get("method") == "random" or len(choice.get("candidates") or ()) < 2)


def _runs(texts: Sequence[str]) -> list[int]:
    """Lengths of the runs of identical consecutive texts (``a a b a`` -> ``[2, 1, 1]``)."""
    runs: list[int] = []
    for i, text in enumerate(texts):
        if i and text == texts[i - 1]:
            runs[-1] += 1
        else:
            runs.append(1)
    return runs


def longest_repeat(trajectory: Iterable[Mapping[str, Any]]) -> int:
    """The longest run of identical consecutive replies (0 without replies)."""
    return max(_runs(replies(trajectory)), default=0)


@dataclass(frozen=True, slots=True)
class Repetition:
    """One row of the repetition table: a group's episodes that have replies."""

    group: dict[str, Any]
    episodes: int
    stuck: float  # % of episodes with a run of STUCK_RUN or more
    longest: float  # mean longest run
    repeated: float  # % of replies equal to the previous one

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def summarize_repetition(results: Iterable[EpisodeResult], *, by: Sequence[str]) -> list[Repetition]:
    """One :class:`Repetition` per distinct value of ``by`` (order of first appearance), over the
    episodes whose trajectories hold replies; empty when none do (trajectories not loaded)."""
    groups: dict[tuple[Any, ...], list[list[int]]] = {}
    for result in results:
        runs = _runs(replies(result.trajectory))
        if runs:
            groups.setdefault(tuple(group_value(result, key) for key in by), []).append(runs)
    rows = []
    for values, episodes in groups.items():
        total = sum(sum(runs) for runs in episodes)
        again = sum(sum(runs) - len(runs) for runs in episodes)  # each run of n has n-1 repeats
        rows.append(Repetition(
            group=dict(zip(by, values)),
            episodes=len(episodes),
            stuck=100 * sum(max(runs) >= STUCK_RUN for runs in episodes) / len(episodes),
            longest=sum(max(runs) for runs in episodes) / len(episodes),
            repeated=100 * again / total,
        ))
    return rows
