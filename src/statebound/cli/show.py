"""``statebound show``: one stored trajectory, state by state."""

from __future__ import annotations

from pathlib import Path

import typer

from statebound.cli.app import app


@app.command("show")
def show_command(
    run_dir: Path = typer.Argument(..., help="Run directory made by 'statebound eval'."),
    task: str = typer.Option(..., "--task", "-t", help="Task id."),
    agent: str | None = typer.Option(None, "--agent", "-a", help="Only this agent."),
    model: str | None = typer.Option(None, "--model", "-m", help="Only this model."),
    seed: int | None = typer.Option(None, "--seed", help="Only this seed."),
) -> None:
    """Print the trajectories of TASK in RUN_DIR (every agent/model/seed unless narrowed), state by state: each model reply, action and observation, and each choice a choice state made.

    Example: statebound show runs/sql --task 7 --agent stateflow"""
    from statebound.bench.store import RunStore
    from statebound.errors import StateboundError
    from statebound.report.show import render_episode

    try:
        with RunStore(run_dir, read_only=True) as store:
            episodes = store.episodes(task=task, agent=agent, model=model, seed=seed)
    except StateboundError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from None
    if not episodes:
        typer.secho(f"error: no stored episode of task {task!r} matches in {run_dir}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1)
    for episode in episodes:
        render_episode(episode)
