"""How far a run has got: episodes stored, crashed and left per agent, with the compute still needed.

Opens stores read-only, so it can watch a run that is being written (or a committed record)
without changing a byte of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from statebound.bench.store import STORE_NAME, RunNotFound, RunStore

__all__ = ["AgentProgress", "find_runs", "run_progress", "status_rows"]


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

    def seconds_left(self, workers: int = 1) -> float | None:
        """Wall-clock seconds the episodes left need at the mean pace so far, on ``workers`` workers."""
        if self.left == 0:
            return 0.0
        if self.mean_seconds is None:
            return None
        return self.left * self.mean_seconds / workers


def find_runs(paths: Sequence[str | Path]) -> list[Path]:
    """The run directories among ``paths``, or under them (a folder of records, say), in order."""
    runs: list[Path] = []
    for given in map(Path, paths):
        found = [given] if (given / STORE_NAME).exists() else sorted(p.parent for p in given.rglob(STORE_NAME))
        if not found:
            raise RunNotFound(f"{given} holds no run ({STORE_NAME} missing, here or below); "
                              "pass a directory made by 'statebound eval'")
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


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes = round(seconds / 60)
    return f"{minutes // 60}h{minutes % 60:02d}" if minutes >= 60 else f"{minutes}m"


def status_rows(
    progress: Sequence[AgentProgress], *, workers: int, now: float
) -> tuple[list[str], list[list[str]]]:
    """A table of ``progress`` (header, rows), with a total row when there are several lines.

    The run directory is a column only when it tells lines apart that benchmark, agent and model
    do not (the usual layout, one run per agent, needs none)."""
    identities = [(item.benchmark, item.agent, item.model) for item in progress]
    with_run = len(set(identities)) < len(identities)
    header = [*(["run"] if with_run else []), "benchmark", "agent", "model", "done", "crashed", "s/episode",
              f"left ({workers} worker{'s' if workers > 1 else ''})", "since last"]
    body = []
    for item in progress:
        ago = "never" if item.last_finished is None else _duration(now - item.last_finished)
        mean = "?" if item.mean_seconds is None else f"{item.mean_seconds:.0f}"
        body.append([
            *([str(item.run_dir)] if with_run else []), item.benchmark, item.agent, item.model,
            f"{item.stored}/{item.planned}", str(item.crashed), mean, _duration(item.seconds_left(workers)), ago,
        ])
    if len(progress) > 1:
        lefts = [item.seconds_left(workers) for item in progress]
        total = _duration(sum(left for left in lefts if left is not None)) + (" + ?" if None in lefts else "")
        done = f"{sum(p.stored for p in progress)}/{sum(p.planned for p in progress)}"
        padding = [""] * (len(header) - 8)
        body.append(["total", *padding, "", "", done, str(sum(p.crashed for p in progress)), "", total, ""])
    return header, body
