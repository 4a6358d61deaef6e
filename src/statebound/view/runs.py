"""What the run pages show, read from a run store on each request (read-only: a run being written
keeps writing, and its new episodes show on reload).

The grid has a row per task and a column per agent and model; a cell holds the task's episodes
of that group (one per seed), each solved, failed or crashed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from statebound.bench.plan import RunConfig
from statebound.bench.store import RunStore
from statebound.contract.columns import INFORMATIVE_SUCCESS
from statebound.contract.result import EpisodeResult
from statebound.report.grid import Section

__all__ = ["OUTCOMES", "SORTS", "Grid", "RunFacts", "episode", "grid", "outcome", "read_config", "read_run", "result_sections",
           "task_text"]

Outcome = Literal["solved", "failed", "crashed"]
OUTCOMES: tuple[Outcome, ...] = ("solved", "failed", "crashed")
SORTS = ("run", "task", "hardest", "easiest")  # run order, task id, fewest solved first, most first


def outcome(result: EpisodeResult) -> Outcome:
    return "crashed" if result.error is not None else "solved" if result.success else "failed"


@dataclass(frozen=True, slots=True)
class RunFacts:
    """A run at a glance, and its episodes (rows only, no trajectories)."""

    benchmark: str
    agents: tuple[str, ...]
    models: tuple[str, ...]
    results: list[EpisodeResult]

    @property
    def outcomes(self) -> Counter[str]:
        return Counter(outcome(r) for r in self.results)


def read_run(path: Path) -> RunFacts:
    """The run's configuration and episode rows, read now."""
    with RunStore(path, read_only=True) as store:
        config, results = store.config(), store.results()
    agents = tuple(dict.fromkeys([*(config.agents if config else ()), *(r.agent for r in results)]))
    models = tuple(dict.fromkeys([*(m.name for m in (config.models if config else ())), *(r.model for r in results)]))
    return RunFacts(config.benchmark if config else "?", agents, models, results)


def result_sections(path: Path) -> list[tuple[Section, list[str]]]:
    """The report's tables for this run (results, breakdowns, exits, comparisons), each without
    the key columns holding one value throughout, which come beside it (``model: m``)."""
    from statebound.report.grid import lift_constant_keys
    from statebound.report.sections import sections
    from statebound.report.tables import build_report, load_runs

    runs = load_runs([path])
    if not runs[0].results:
        return []
    return [lift_constant_keys(section) for section in sections(build_report(runs))]


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


def read_config(path: Path) -> RunConfig | None:
    with RunStore(path, read_only=True) as store:
        return store.config()


def episode(path: Path, *, task: str, agent: str, model: str | None, seed: int | None) -> EpisodeResult | None:
    """One stored episode with its trajectory and events (the first seed or model when not given)."""
    with RunStore(path, read_only=True) as store:
        found = store.episodes(task=task, agent=agent, model=model, seed=seed)
    return found[0] if found else None


def task_text(result: EpisodeResult) -> str | None:
    """The task as the agent was given it: the first entry from the task (else the first user entry)."""
    items = result.trajectory
    first = next((i for i in items if i.get("source") == "task"), None) or next(
        (i for i in items if i.get("role") == "user"), None)
    return None if first is None else str(first.get("content", ""))
