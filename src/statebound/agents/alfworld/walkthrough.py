"""The oracle agent: replay a game's stored walkthrough (TextWorld's ``extra.walkthrough``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from statebound.envs.alfworld import AlfworldEnv

__all__ = ["WalkthroughOutcome", "play_walkthrough"]


@dataclass(frozen=True, slots=True)
class WalkthroughOutcome:
    won: bool
    steps: int
    cause: str = ""  # why the game was not won ("" when it was)
    trajectory: list[dict[str, str]] = field(default_factory=list)


def play_walkthrough(env: AlfworldEnv) -> WalkthroughOutcome:
    """Send the walkthrough's commands of the game ``env`` was reset on until the game ends."""
    commands = env.walkthrough()
    trajectory: list[dict[str, str]] = []
    refused: list[str] = []
    for command in commands:
        result = env.step(command)
        trajectory.append({"action": command, "observation": result.observation})
        if not result.ok:
            refused.append(f"step {env.steps} {command!r} was refused")
        if result.done:
            break
    if env.won:
        return WalkthroughOutcome(True, env.steps, "", trajectory)
    if not commands:
        cause = "the game stores no walkthrough"
    elif env.steps >= env.max_steps and env.steps < len(commands):
        cause = f"the walkthrough has {len(commands)} commands, more than the {env.max_steps}-step limit"
    else:
        cause = f"all {len(commands)} walkthrough commands ran without winning"
    if refused:
        cause += "; " + "; ".join(refused)
    return WalkthroughOutcome(False, env.steps, cause, trajectory)
