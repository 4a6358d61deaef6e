"""The tasks x agents grid: a row per task, a column per agent and model, each cell the task's
episodes of that group (one per seed), each solved, failed or crashed. ``statebound view`` and
``report.html`` both draw it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from statebound.contract.columns import INFORMATIVE_SUCCESS
from statebound.contract.result import EpisodeResult

__all__ = ["OUTCOMES", "SORTS", "Grid", "Group", "Outcome", "grid", "outcome", "url_name"]

Outcome = Literal["solved", "failed", "crashed"]
OUTCOMES: tuple[Outcome, ...] = ("solved", "failed", "crashed")
SORTS = ("run", "task", "hardest", "easiest")  # run order, task id, fewest solved first, most first


def outcome(result: EpisodeResult) -> Outcome:
    return "crashed" if result.error is not None else "solved" if result.success else "failed"


Group = tuple[str, str]  # agent, model


@dataclass(frozen=True, slots=True)
class Grid:
    """Tasks (rows) by groups (columns): ``cells[(task, group)]`` are the episodes, one per seed."""

    tasks: list[str]
    groups: list[Group]
    cells: dict[tuple[str, Group], list[EpisodeResult]]
    informative: frozenset[str]
    solved: dict[str, int] = field(default_factory=dict)  # task -> solved episodes (shown groups)
    hidden: int = 0  # tasks the outcome filter left out


def grid(results: Sequence[EpisodeResult], *, agent: str | None = None, want: str | None = None,
         sort: str = "run") -> Grid:
    """The grid of ``results``, narrowed to ``agent``'s columns and to the tasks where some shown
    episode ended ``want`` (solved, failed, crashed), sorted by ``sort`` (:data:`SORTS`)."""
    shown = [r for r in results if agent is None or r.agent == agent]
    groups = list(dict.fromkeys((r.agent, r.model) for r in shown))
    cells: dict[tuple[str, Group], list[EpisodeResult]] = {}
    for result in shown:
        cells.setdefault((result.task, (result.agent, result.model)), []).append(result)
    for episodes in cells.values():
        episodes.sort(key=lambda r: r.seed)
    tasks = list(dict.fromkeys(r.task for r in shown))
    solved = {task: 0 for task in tasks}
    for result in shown:
        solved[result.task] += outcome(result) == "solved"
    kept = tasks if want is None else [t for t in tasks if any(
        outcome(r) == want for g in groups for r in cells.get((t, g), ()))]
    if sort == "task":
        kept.sort(key=lambda t: (len(t), t))
    elif sort in ("hardest", "easiest"):
        kept.sort(key=lambda t: solved[t] if sort == "hardest" else -solved[t])
    informative = frozenset(r.task for r in results if INFORMATIVE_SUCCESS.key in r.meta)
    return Grid(kept, groups, cells, informative, solved, hidden=len(tasks) - len(kept))


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def url_name(label: str) -> str:
    """A run's name in the viewer's URLs: its label with what a URL path cannot hold made ``-``."""
    return _UNSAFE.sub("-", label).strip("-") or "run"
