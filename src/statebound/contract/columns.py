"""Benchmark-specific report columns, computed from each episode's ``meta``.

A benchmark declares its extra columns as a tuple of :class:`MetaColumn` (for example the QA
benchmarks' EM % and F1 %, or ALFWorld's state-tracking accuracy) in its ``report_columns``
(:class:`statebound.contract.benchmark.Benchmark`); reports then show them after the generic
columns. A group in which no episode has the key shows a blank (``None``), so runs of different
benchmarks still render side by side.

```python
EM = MetaColumn("em", "EM %", scale=100, missing=0.0, note="exact match, %")  # crashed episodes count as 0
VIOLATIONS = MetaColumn("violations", "Violations/q")  # mean over episodes that have it
```
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from statebound.contract.result import EpisodeResult
from statebound.errors import DefinitionError

__all__ = ["CHOICES", "INFORMATIVE_SUCCESS", "INVALID_ACTIONS", "MetaColumn", "column_value", "group_value",
           "merge_columns"]

Aggregate = Literal["mean", "sum"]


@dataclass(frozen=True, slots=True)
class MetaColumn:
    """One extra column: ``meta[key]`` (or an :class:`EpisodeResult` field) aggregated per group.

    ``aggregate``: ``"mean"`` (over the episodes that have the key, or over all episodes with
    ``missing`` standing in for the absent ones) or ``"sum"``. ``weight`` names another key whose
    value weights the mean (e.g. the steps a per-episode accuracy was measured on). The aggregate
    is multiplied by ``scale`` (100 for a share shown as %) and rendered with ``format``. ``note``
    says what the column means (the reports' glossary); ``essential`` keeps it in the first part
    of a table split to fit the terminal.
    """

    key: str
    header: str
    format: str = "{:.2f}"
    aggregate: Aggregate = "mean"
    scale: float = 1.0
    missing: float | None = None
    weight: str | None = None
    note: str = ""
    essential: bool = False

    def __post_init__(self) -> None:
        if self.aggregate not in ("mean", "sum"):
            raise DefinitionError(f"column {self.key!r}: aggregate must be 'mean' or 'sum', not {self.aggregate!r}")
        try:
            self.format.format(1.0)
        except (ValueError, IndexError, KeyError) as exc:
            raise DefinitionError(f"column {self.key!r}: bad format {self.format!r} ({exc})") from None

    def render(self, value: float | None) -> str:
        """The table cell: formatted, or empty when the group has no such value."""
        return "" if value is None else self.format.format(value)


# For benchmarks whose environment refuses actions it cannot read (InterCode's SQL and Bash): those
# actions ran nothing, so they are in no error rate; a benchmark declares this column to show them.
INVALID_ACTIONS = MetaColumn("invalid_actions", "Invalid/ep", essential=True,
                             note="mean actions per episode the environment could not read as an action (no "
                                  "command, no submit): nothing ran and the observation said so; they count as "
                                  "turns but are not in Error %")

# For benchmarks whose upstream reward lets doing nothing succeed on some tasks (InterCode's SQL: a
# gold result of no rows, 0 or NULL; Bash: a gold command that changes no file and whose output an
# empty one matches): the success rate over the other tasks. A benchmark declares this column and
# sets the key in the meta of the episodes on those tasks.
INFORMATIVE_SUCCESS = MetaColumn(
    "informative_success", "SR % (informative)", scale=100, essential=True,
    note="success rate over the episodes on informative tasks: those where doing nothing (SQL: a query that "
         "finds nothing; Bash: a command that changes nothing and prints nothing) does not already score 1, as "
         "upstream's reward lets it on the others (crashed episodes have no value; for runs stored before this "
         "column, statebound report --informative works it out)")

# Read from trajectories when reports load them (:func:`statebound.report.tables.load_runs`), for any
# benchmark: shown when some episode made a choice.
CHOICES = MetaColumn("choices", "Choices/ep", missing=0.0, essential=True,
                     note="mean choices per episode made by choice states (a flow Pick, or a model call held to a "
                          "choice grammar: candidates scored or generated, one picked)")


def group_value(result: EpisodeResult, key: str) -> Any:
    """``key`` as a result field (``agent``, ``model``...) or else from ``result.meta``."""
    if key in EpisodeResult.__dataclass_fields__:
        return getattr(result, key)
    return result.meta.get(key)


def _number(result: EpisodeResult, key: str) -> float | None:
    value = group_value(result, key)
    if isinstance(value, bool):
        return float(value)
    return float(value) if isinstance(value, int | float) else None


def _weight(column: MetaColumn, result: EpisodeResult) -> float:
    if column.weight is None:
        return 1.0
    return _number(result, column.weight) or 0.0


def column_value(column: MetaColumn, results: Sequence[EpisodeResult]) -> float | None:
    """``column``'s aggregate over ``results``; ``None`` when none of them has the key."""
    values = [_number(r, column.key) for r in results]
    if all(v is None for v in values):
        return None
    present: list[tuple[float, float]] = []
    for result, value in zip(results, values):
        filled = column.missing if value is None else value
        if filled is not None:
            present.append((filled, _weight(column, result)))
    if column.aggregate == "sum":
        total = sum(value for value, _ in present)
    else:
        weights = sum(weight for _, weight in present)
        if weights == 0:
            return None
        total = sum(value * weight for value, weight in present) / weights
    return column.scale * total


def merge_columns(groups: Iterable[Sequence[MetaColumn]]) -> tuple[MetaColumn, ...]:
    """The columns of several benchmarks, each key once, in order of first appearance."""
    merged: dict[str, MetaColumn] = {}
    for columns in groups:
        for column in columns:
            merged.setdefault(column.key, column)
    return tuple(merged.values())

