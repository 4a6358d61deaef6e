"""The papers' table columns, computed from episode results.

Per group (agent and model by default, optionally a ``meta`` key such as ``hardness``):
SR % (with a Wilson 95 % interval), mean reward, mean turns, error % (each episode's share of
failed actions, averaged over episodes), total cost $, and average prompt and completion tokens
per episode. Crashed episodes count as failures and are also counted apart. A benchmark's own
columns (:class:`~statebound.report.columns.MetaColumn`, from episode ``meta``) land in
``Summary.extra``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from statebound.bench.result import EpisodeResult
from statebound.report.columns import MetaColumn, column_value, group_value
from statebound.report.stats import wilson_interval

__all__ = ["COLUMNS", "Summary", "group_label", "group_value", "summarize"]

# (field, header, format) in the order of the papers' Table 1.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("sr", "SR %", "{:.2f}"),
    ("reward", "Reward", "{:.4f}"),
    ("turns", "Turns", "{:.2f}"),
    ("error", "Error %", "{:.2f}"),
    ("cost", "Cost $", "{:.4f}"),
    ("prompt_tokens", "Avg p-token", "{:.0f}"),
    ("completion_tokens", "Avg c-token", "{:.0f}"),
)


@dataclass(frozen=True, slots=True)
class Summary:
    """One row of a results table."""

    group: dict[str, Any]
    episodes: int
    successes: int
    sr: float
    sr_low: float
    sr_high: float
    reward: float
    turns: float
    error: float
    cost: float
    prompt_tokens: float
    completion_tokens: float
    crashed: int
    extra: dict[str, float | None] = field(default_factory=dict)  # MetaColumn.key -> value

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def group_label(group: dict[str, Any]) -> str:
    """``{"agent": "direct", "model": "m"}`` -> ``"direct / m"``."""
    return " / ".join(str(value) for value in group.values())


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _summary(
    group: dict[str, Any], results: Sequence[EpisodeResult], columns: Sequence[MetaColumn]
) -> Summary:
    n = len(results)
    successes = sum(r.success for r in results)
    low, high = wilson_interval(successes, n)
    return Summary(
        group=group,
        episodes=n,
        successes=successes,
        sr=100 * successes / n,
        sr_low=100 * low,
        sr_high=100 * high,
        reward=_mean([r.reward for r in results]),
        turns=_mean([r.turns for r in results]),
        error=100 * _mean([r.error_rate for r in results]),
        cost=sum(r.cost_usd for r in results),
        prompt_tokens=_mean([r.prompt_tokens for r in results]),
        completion_tokens=_mean([r.completion_tokens for r in results]),
        crashed=sum(r.error is not None for r in results),
        extra={column.key: column_value(column, results) for column in columns},
    )


def summarize(
    results: Iterable[EpisodeResult],
    *,
    by: Sequence[str] = ("agent", "model"),
    columns: Sequence[MetaColumn] = (),
) -> list[Summary]:
    """One :class:`Summary` per distinct value of ``by``, in order of first appearance, with
    ``columns`` computed into ``Summary.extra``."""
    groups: dict[tuple[Any, ...], list[EpisodeResult]] = {}
    for result in results:
        groups.setdefault(tuple(group_value(result, key) for key in by), []).append(result)
    return [_summary(dict(zip(by, values)), members, columns) for values, members in groups.items()]
