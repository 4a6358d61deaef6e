"""Plain-file exports of a run store: ``results.jsonl`` and one JSON file per trajectory (with the
environment's side: the task text and the steps, each with what was offered before it)."""

from __future__ import annotations

import re
from pathlib import Path

from statebound.bench.jsonio import dumps
from statebound.bench.store import RunStore

__all__ = ["export_run", "trajectory_path"]


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "_"


def trajectory_path(run_dir: Path, *, agent: str, model: str, seed: int, task: str) -> Path:
    """``trajectories/<agent>/<model>/seed<seed>/<task>.json`` (names made file-system safe)."""
    return run_dir / "trajectories" / _safe(agent) / _safe(model) / f"seed{seed}" / f"{_safe(task)}.json"


def export_run(store: RunStore) -> Path:
    """Write ``results.jsonl`` (one row per episode, run order) and the trajectory files."""
    run_dir = store.run_dir
    lines = []
    for result in store.iter_trajectories():
        lines.append(dumps(result.row()))
        path = trajectory_path(run_dir, agent=result.agent, model=result.model, seed=result.seed, task=result.task)
        path.parent.mkdir(parents=True, exist_ok=True)
        document = {"episode": result.row(), "trajectory": result.trajectory, "events": result.events,
                    "task_text": result.task_text, "steps": result.env_steps}
        path.write_text(dumps(document, indent=1), encoding="utf-8")
    results_path = run_dir / "results.jsonl"
    results_path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return results_path
