"""What the run pages show, read from a run store on each request (read-only: a run being written
keeps writing, and its new episodes show on reload).

The grid (:mod:`statebound.report.task_grid`, shared with ``report.html``) has a row per task and a
column per agent and model; a cell holds the task's episodes of that group (one per seed)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from statebound.bench.plan import RunConfig
from statebound.bench.store import RunStore
from statebound.contract.result import EpisodeResult
from statebound.report.grid import Section
from statebound.report.task_grid import OUTCOMES, SORTS, Grid, grid, outcome
from statebound.view.flowmap import local_ref

__all__ = ["OUTCOMES", "PREVIEW_CHARS", "SORTS", "Grid", "RunFacts", "episode", "grid", "outcome", "read_config", "read_diagrams",
           "read_run", "result_sections", "search", "task_previews", "task_text"]  # the grid's names come from statebound.report.task_grid

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


PREVIEW_CHARS = 160


def task_previews(path: Path, config: RunConfig | None) -> dict[str, str]:
    """Each task's text, cut to :data:`PREVIEW_CHARS`: the benchmark's question when the benchmark
    can be loaded here, else the text the agent was given first (read from the store)."""
    name = None if config is None else local_ref(config.benchmark)
    found = {} if name is None or config is None else dict(
        _questions(name, json.dumps(config.benchmark_options, sort_keys=True, default=str)))
    if not found:
        with RunStore(path, read_only=True) as store:
            found = store.task_texts(chars=PREVIEW_CHARS)
    return {task: " ".join(text.split())[:PREVIEW_CHARS] for task, text in found.items()}


@lru_cache(maxsize=16)
def _questions(benchmark: str, options: str) -> tuple[tuple[str, str], ...]:
    """The benchmark's tasks as (id, question), or nothing when it cannot be loaded here
    (``benchmark``: a registered name, or a file as :func:`local_ref` gives it)."""
    from statebound.bench.registry import benchmark_names, load_benchmark
    from statebound.user_files import is_file_ref

    if not is_file_ref(benchmark) and benchmark not in benchmark_names():
        return ()
    try:
        return tuple((task.id, task.question) for task in load_benchmark(benchmark, json.loads(options)).benchmark.tasks())
    except Exception:  # noqa: BLE001 - no previews from the benchmark then: the store's texts stand in
        return ()


def read_config(path: Path) -> RunConfig | None:
    with RunStore(path, read_only=True) as store:
        return store.config()


def read_diagrams(path: Path) -> dict[str, str]:
    """The flow diagrams (DOT) the run stored, by agent."""
    with RunStore(path, read_only=True) as store:
        return store.diagrams()


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


SEARCH_LIMIT = 100  # episodes listed per run
SEARCH_MAX_CHARS = 200


@dataclass(frozen=True, slots=True)
class Hit:
    """An episode whose text holds what was searched: the first entry holding it (``index``), as
    the text around the match (``before``, ``match``, ``after``)."""

    run: str
    task: str
    agent: str
    model: str
    seed: int
    index: int
    before: str
    match: str
    after: str


def search_problem(text: str) -> str | None:
    """Why ``text`` cannot be searched for (empty, or too long), or ``None``."""
    if not text:
        return "give some text to search for: a word of a task, a reply or an observation"
    if len(text) > SEARCH_MAX_CHARS:
        return f"the search text has {len(text)} characters; give at most {SEARCH_MAX_CHARS}"
    return None


def search(runs: dict[str, Path], text: str, *, around: int = 80) -> list[Hit]:
    """The episodes of ``runs`` (name -> directory) one of whose entries holds ``text``, letters A-Z
    in either case (:meth:`RunStore.search`), at most :data:`SEARCH_LIMIT` per run."""
    hits = []
    for name, path in runs.items():
        with RunStore(path, read_only=True) as store:
            found = store.search(text, limit=SEARCH_LIMIT)
        for task, agent, model, seed, index, content in found:
            at = content.lower().find(text.lower())
            at = max(at, 0)
            start, end = max(at - around, 0), at + len(text)
            hits.append(Hit(name, task, agent, model, seed, index, ("..." if start else "") + content[start:at],
                            content[at:end], content[end:end + around] + ("..." if end + around < len(content) else "")))
    return hits
