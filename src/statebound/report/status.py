"""How far a run has got: episodes stored, crashed and left per agent, with the compute still needed.

Opens stores read-only, so it can watch a run that is being written (or a committed record)
without changing a byte of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from statebound.bench.pace import Pace, format_duration, format_seconds
from statebound.bench.packed import has_store, run_dirs_below
from statebound.bench.store import RunNotFound, RunStore, no_run_in
from statebound.report.grid import Column, Section

__all__ = ["AgentProgress", "find_runs", "run_progress", "status_section"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentProgress:
    """One (agent, model) of a run."""

    run_dir: Path
    benchmark: str
    agent: str
    model: str
    planned: int
    stored: int
    crashed: int
    mean_seconds: float | None  # mean wall-clock seconds of the finished (not crashed) episodes
    last_finished: float | None  # Unix time the last episode was stored

    @property
    def left(self) -> int:
        return self.planned - self.stored


def find_runs(paths: Sequence[str | Path]) -> list[Path]:
    """The run directories among ``paths``, or under them (a folder of records, say), in order."""
    runs: list[Path] = []
    for given in map(Path, paths):
        found = [given] if has_store(given) else list(run_dirs_below(given))
        if not found:
            raise no_run_in(given, below=True)
        runs.extend(run for run in found if run not in runs)
    return runs


def run_progress(run_dir: str | Path) -> list[AgentProgress]:
    """The progress of every (model, agent) planned in the run in ``run_dir``, in plan order."""
    directory = Path(run_dir)
    with RunStore(directory, read_only=True) as store:
        config, stats = store.config(), store.episode_stats()
    if config is None:
        raise RunNotFound(f"{directory} holds a store but no run configuration (the run never started)")
    per_agent = len(config.task_ids) * len(config.seeds)
    progress = []
    for model in config.models:
        for agent in config.agents:
            stored, crashed, mean, last = stats.get((agent, model.name), (0, 0, None, None))
            progress.append(AgentProgress(
                run_dir=directory, benchmark=config.benchmark, agent=agent, model=model.name,
                planned=per_agent, stored=stored, crashed=crashed, mean_seconds=mean, last_finished=last,
            ))
    return progress


_HEADER_NOTES = {
    "run": "the run directory",
    "benchmark": "the benchmark",
    "agent": "the agent",
    "model": "the model",
    "done": "episodes stored of those planned",
    "crashed": "stored episodes that crashed (--resume --retry-errors runs them again)",
    "s/episode": "mean wall-clock seconds of the finished episodes (~: borrowed from the run's other agents, "
                 "before this one's first)",
    "left": "time the episodes left need at that pace on the given workers",
    "since last": "time since the last episode was stored",
}


def _paces(progress: Sequence[AgentProgress]) -> dict[Path, Pace]:
    """One pace per run (agents borrow each other's pace only within a run)."""
    paces: dict[Path, Pace] = {}
    for item in progress:
        pace = paces.setdefault(item.run_dir, Pace())
        finished = item.stored - item.crashed
        if item.mean_seconds is not None and finished > 0:
            pace.add((item.agent, item.model), item.mean_seconds * finished, episodes=finished)
    return paces


def status_section(progress: Sequence[AgentProgress], *, workers: int, now: float) -> Section:
    """The status table of ``progress``, with a total when there are several lines.

    The run directory is a column only when it tells lines apart that benchmark, agent and model
    do not (the usual layout, one run per agent, needs none). An agent without a finished episode
    yet is estimated at its run's pace so far, marked ``~``."""
    identities = [(item.benchmark, item.agent, item.model) for item in progress]
    with_run = len(set(identities)) < len(identities)
    left_header = f"left ({workers} worker{'s' if workers > 1 else ''})"
    names = [*(["run"] if with_run else []), "benchmark", "agent", "model", "done", "crashed", "s/episode",
             left_header, "since last"]
    columns = tuple(Column(name, _HEADER_NOTES[name.split(" (")[0]], key=name in ("run", "benchmark", "agent", "model"),
                           essential=True) for name in names)
    paces = _paces(progress)
    rows = []
    for item in progress:
        pace, group = paces[item.run_dir], (item.agent, item.model)
        mean = pace.mean(group)
        borrowed = "~" if pace.own_mean(group) is None and mean is not None else ""
        ago = "never" if item.last_finished is None else format_duration(now - item.last_finished)
        left = 0.0 if item.left == 0 else pace.seconds_left({group: item.left}, workers=workers)
        rows.append((
            *([str(item.run_dir)] if with_run else []), item.benchmark, item.agent, item.model,
            f"{item.stored}/{item.planned}", str(item.crashed), borrowed + format_seconds(mean),
            (borrowed if item.left else "") + format_duration(left), ago,
        ))
    footer = None
    if len(progress) > 1:
        lefts = [paces[run_dir].seconds_left({(p.agent, p.model): p.left for p in progress if p.run_dir == run_dir},
                                             workers=workers) for run_dir in paces]
        total = format_duration(sum(left for left in lefts if left is not None)) + (" + ?" if None in lefts else "")
        done = f"{sum(p.stored for p in progress)}/{sum(p.planned for p in progress)}"
        padding = [""] * (len(names) - 8)
        footer = (*padding, "", "total", "", done, str(sum(p.crashed for p in progress)), "", total, "")
    return Section("Run status", columns, tuple(rows), footer)

