"""``statebound show``: one stored trajectory, state by state."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from statebound.cli.app import app
from statebound.web.forms import MAX_INT

if TYPE_CHECKING:
    from statebound.bench.plan import EpisodeKey


@app.command("show")
def show_command(
    run_dir: Path = typer.Argument(..., help="Run directory made by 'statebound eval'."),
    task: str = typer.Option(..., "--task", "-t", help="Task id."),
    agent: str | None = typer.Option(None, "--agent", "-a", help="Only this agent."),
    model: str | None = typer.Option(None, "--model", "-m", help="Only this model."),
    seed: int | None = typer.Option(None, "--seed", min=-MAX_INT - 1, max=MAX_INT, help="Only this seed."),
) -> None:
    """Print the trajectories of TASK in RUN_DIR (every agent/model/seed unless narrowed), state by state: each model reply, the action as the environment ran it (SQL, command, game command) and its observation, and each choice a choice state made; then the task's gold, the expected and obtained result and the reward. Lines fit the terminal's width.

    Example: statebound show runs/sql --task 7 --agent stateflow"""
    from statebound.bench.store import RunStore
    from statebound.cli.errors import fail
    from statebound.errors import StateboundError
    from statebound.report.episode_detail import reference_for
    from statebound.report.inert import inert
    from statebound.report.show import render_episode

    try:
        with RunStore(run_dir, read_only=True) as store:
            episodes = store.episodes(task=task, agent=agent, model=model, seed=seed)
            config = store.config()
            stored = store.finished() if not episodes else set()
    except StateboundError as exc:
        fail(str(exc))
    if not episodes:
        asked = "".join(f" {flag} {value}" for flag, value in (("--agent", agent), ("--model", model), ("--seed", seed))
                        if value is not None)
        message = f"no stored episode of task {task!r}{asked} in {run_dir}; {_what_is_stored(stored, task)}"
        typer.secho(f"error: {inert(message, one_line=True)}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1)
    reference = reference_for(config.benchmark, config.benchmark_options, task) if config is not None else None
    for episode in episodes:
        render_episode(episode, reference=reference)


def _what_is_stored(stored: set[EpisodeKey], task: str) -> str:
    """What the run does hold: the agents, models and seeds stored for ``task``, or else its tasks."""
    of_task = [key for key in stored if key.task == task]
    if not of_task:
        tasks = sorted({key.task for key in stored}, key=lambda t: (len(t), t))
        shown = ", ".join(tasks[:10]) + (f", ... ({len(tasks)} tasks)" if len(tasks) > 10 else "")
        return f"stored tasks: {shown or 'none yet'}"
    parts = [(name, sorted({str(getattr(key, field)) for key in of_task}))
             for name, field in (("agents", "agent"), ("models", "model"), ("seeds", "seed"))]
    return f"stored for task {task}: " + "; ".join(f"{name} {', '.join(values)}" for name, values in parts)
