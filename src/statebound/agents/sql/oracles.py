"""Oracles that check the environment: ``gold`` submits the gold query; ``replay`` runs recorded
actions (a JSONL file of ``{"task": ID, "actions": ["execute[...]", ..., "submit"]}``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from statebound.agents.budget import transitions_for
from statebound.agents.sql.tools import act, env_action, is_done
from statebound.errors import DefinitionError
from statebound.flow import CallTool, Flow, RunContext, State, ToolResult, always

__all__ = ["build_gold", "build_replay", "load_replay"]


def build_gold() -> Flow:
    def run_gold(ctx: RunContext) -> ToolResult:
        return act(ctx, f"execute[{ctx.deps.task.gold}]")

    return Flow(name="gold", initial="Gold", max_turns=4, states=[
        State("Gold", outputs=[CallTool(run_gold, name="sql")],
              transitions=[(is_done, "End"), (always(), "Submit")]),
        State("Submit", outputs=[CallTool(env_action("submit"), name="sql")],
              transitions=[(always(), "End")]),
        State("End", final=True),
    ])


def load_replay(path: Path | str) -> dict[str, list[str]]:
    """Read the recorded actions per task id; errors name the line to fix."""
    recorded: dict[str, list[str]] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            task, actions = str(record["task"]), record["actions"]
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            raise DefinitionError(
                f"{path}:{number}: expected {{\"task\": ID, \"actions\": [...]}}, got {line[:80]!r} ({err})"
            ) from err
        if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
            raise DefinitionError(f"{path}:{number}: 'actions' must be a list of strings")
        recorded[task] = actions
    return recorded


def build_replay(recorded: Mapping[str, Sequence[str]], *, max_turns: int = 10) -> Flow:
    """Run the recorded actions of the current task in order; submit if they run out."""

    def next_action(ctx: RunContext) -> ToolResult:
        task_id = ctx.deps.task.id
        if task_id not in recorded:
            raise DefinitionError(f"the replay file has no actions for task {task_id}")
        done = sum(1 for e in ctx.history if e.source == "tool")
        actions = list(recorded[task_id])
        return act(ctx, actions[done] if done < len(actions) else "submit")

    return Flow(name="replay", initial="Replay", max_turns=transitions_for(max_turns, outside=2), states=[
        State("Replay", outputs=[CallTool(next_action, name="sql")],
              transitions=[(is_done, "End"), (always(), "Replay")]),
        State("End", final=True),
    ])
