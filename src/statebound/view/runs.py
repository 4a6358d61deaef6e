"""What the run pages show, read from a run store on each request (read-only: a run being written
keeps writing, and its new episodes show on reload).

The grid (:mod:`statebound.report.task_grid`, shared with ``report.html``) has a row per task and a
column per agent and model; a cell holds the task's episodes of that group (one per seed)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from statebound.bench.plan import RunConfig
from statebound.bench.store import RunStore
from statebound.contract.result import EpisodeResult
from statebound.report.grid import Section
from statebound.report.task_grid import OUTCOMES, SORTS, Grid, grid, outcome

__all__ = ["OUTCOMES", "SORTS", "Grid", "RunFacts", "episode", "grid", "outcome", "read_config", "read_run", "result_sections",
           "task_text"]  # the grid's names come from statebound.report.task_grid

@dataclass(frozen=True, slots=True)
class RunFacts:
    """A run at a glance, and its episodes (rows only, no trajectories)."""

    benchmark: str
    agents: tuple[str, ...]
    models: tuple[str, ...]
    results: list[EpisodeResult]
    planned: int = 0  # episodes the configuration plans (0: unknown)

    @property
    def running(self) -> bool:
        """Whether episodes are still to come (the page then watches for them)."""
        return len(self.results) < self.planned

    @property
    def outcomes(self) -> Counter[str]:
        return Counter(outcome(r) for r in self.results)


def read_run(path: Path) -> RunFacts:
    """The run's configuration and episode rows, read now."""
    with RunStore(path, read_only=True) as store:
        config, results = store.config(), store.results()
    agents = tuple(dict.fromkeys([*(config.agents if config else ()), *(r.agent for r in results)]))
    models = tuple(dict.fromkeys([*(m.name for m in (config.models if config else ())), *(r.model for r in results)]))
    planned = len(config.task_ids) * len(config.agents) * len(config.models) * len(config.seeds) if config else 0
    return RunFacts(config.benchmark if config else "?", agents, models, results, planned)


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
