"""The papers' table columns, computed from episode results.

Per group (agent and model by default, optionally a ``meta`` key such as ``hardness``):
SR % (with a Wilson 95 % interval), mean reward, mean turns, error % (each episode's share of
failed actions, averaged over episodes), total cost $ (unknown, ``None``, when an episode called a
model the price table does not know), and average prompt and completion tokens per episode. Crashed episodes count as failures and are also counted apart, and every group counts
how its episodes ended (``Summary.exits``: final, a limit, an error). A benchmark's own columns
(:class:`~statebound.contract.columns.MetaColumn`, from episode ``meta``) land in ``Summary.extra``.
Each column says what it means (:data:`COLUMNS`, :data:`EXIT_NOTES`): the reports' glossary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from statebound.contract.columns import MetaColumn, column_value, group_value
from statebound.contract.result import EpisodeResult
from statebound.exits import ExitReason
from statebound.report.stats import wilson_interval

__all__ = ["COLUMNS", "EXIT_NOTES", "UNKNOWN", "StandardColumn", "Summary", "group_label", "group_value", "summarize"]

UNKNOWN = "unknown"  # a cell whose value cannot be computed (e.g. the cost of an unpriced model)


@dataclass(frozen=True, slots=True)
class StandardColumn:
    """A column every results table has: the :class:`Summary` field, header, cell format, what it
    means (the glossary), whether it stays in the first part of a table split to fit, and what an
    unknown value (``None``) means, added to the glossary when a table shows one."""

    field: str
    header: str
    format: str
    note: str
    essential: bool = False
    unknown_note: str = ""

    def render(self, value: float | None) -> str:
        return UNKNOWN if value is None else self.format.format(value)


# In the order of the papers' Table 1.
COLUMNS: tuple[StandardColumn, ...] = (
    StandardColumn("sr", "SR %", "{:.2f}", "success rate: episodes the benchmark graded as solved, %", True),
    StandardColumn("reward", "Reward", "{:.4f}", "mean reward per episode (the benchmark's graded score, 0 to 1)", True),
    StandardColumn("turns", "Turns", "{:.2f}", "mean actions sent to the environment per episode", True),
    StandardColumn("error", "Error %", "{:.2f}",
                   "per episode, the share of its actions that ran and failed (a SQL error, a non-zero exit, an "
                   "action the game refused), averaged over episodes; invalid actions, which never run, are not "
                   "in it (see Invalid/ep where the benchmark has them)", True),
    StandardColumn("cost", "Cost $", "{:.4f}", "total price of the model calls in USD (0 for local models)",
                   unknown_note=f"{UNKNOWN}: some episode called a model whose price statebound.llm.pricing does not "
                   "know (statebound.llm.pricing.register_price adds one), so no total is given"),
    StandardColumn("prompt_tokens", "Avg p-token", "{:.0f}", "mean prompt tokens per episode", True),
    StandardColumn("completion_tokens", "Avg c-token", "{:.0f}", "mean completion tokens per episode"),
)

# What each way of ending an episode means (the "How episodes ended" table).
EXIT_NOTES: dict[ExitReason, str] = {
    ExitReason.FINAL: "the agent ended the episode (a final state, submit, an answer, the game won)",
    ExitReason.TURN_LIMIT: "stopped at the turn limit (--max-turns)",
    ExitReason.VISIT_LIMIT: "a state was entered more often than its visit limit allows",
    ExitReason.TOKEN_LIMIT: "the episode's token limit (--max-tokens) was used up",
    ExitReason.TIME_LIMIT: "the episode's wall-clock limit (--timeout) was reached",
    ExitReason.CONTEXT: "a prompt no longer fitted the model's context window",
    ExitReason.ERROR: "a tool, the model or the flow failed and the agent reported it",
    ExitReason.CRASHED: "an exception escaped the agent; the harness recorded it (see crashed)",
    ExitReason.PAUSED: "a flow waits for a person's answer",
}


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
    cost: float | None  # None: some episode's cost is unknown
    prompt_tokens: float
    completion_tokens: float
    crashed: int
    extra: dict[str, float | None] = field(default_factory=dict)  # MetaColumn.key -> value
    exits: dict[str, int] = field(default_factory=dict)  # ExitReason value -> episodes that ended so
    model_used: bool = True  # False: no episode called the model (a model-free agent, whatever model the run named)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def group_label(group: dict[str, Any]) -> str:
    """``{"agent": "direct", "model": "m"}`` -> ``"direct / m"``."""
    return " / ".join(str(value) for value in group.values())


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _total(values: Sequence[float | None]) -> float | None:
    """The sum, or ``None`` when some value is unknown."""
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


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
        cost=_total([r.cost_usd for r in results]),
        prompt_tokens=_mean([r.prompt_tokens for r in results]),
        completion_tokens=_mean([r.completion_tokens for r in results]),
        crashed=sum(r.error is not None for r in results),
        extra={column.key: column_value(column, results) for column in columns},
        exits=dict(Counter(r.exit_reason.value for r in results)),
        model_used=any(r.llm_calls or r.prompt_tokens or r.completion_tokens for r in results),
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
