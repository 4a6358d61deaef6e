"""Print one episode's trajectory state by state (rich)."""

from __future__ import annotations

from typing import Any

from statebound.bench.result import EpisodeResult
from statebound.report.metrics import group_label

__all__ = ["render_episode"]

_ROLE_STYLE = {"assistant": "green", "user": "cyan", "tool": "yellow", "system": "magenta"}


def render_episode(result: EpisodeResult, *, console: Any = None, max_chars: int = 2000) -> None:
    """One panel per visit to a state, with each entry's role, text and token usage."""
    from rich.console import Console, Group
    from rich.panel import Panel
    from rich.text import Text

    console = console or Console()
    outcome = "success" if result.success else "failure"
    console.rule(
        f"[bold]{result.task}[/] - {group_label({'agent': result.agent, 'model': result.model})} "
        f"seed {result.seed}: {outcome}, reward {result.reward:g}, {result.turns} turns, "
        f"exit {result.exit_state} ({result.exit_reason.value})"
    )
    if result.error:
        console.print(f"[red]crashed: {result.error}[/]")
    visits: list[tuple[str | None, list[dict[str, Any]]]] = []
    for item in result.trajectory:
        state = item.get("state")
        if not visits or visits[-1][0] != state:
            visits.append((state, []))
        visits[-1][1].append(item)
    for number, (state, items) in enumerate(visits, start=1):
        lines = []
        for item in items:
            content = str(item.get("content", ""))
            if len(content) > max_chars:
                content = content[:max_chars] + f" ... [{len(content) - max_chars} more characters]"
            role = str(item.get("role", "?"))
            usage = ""
            if "prompt_tokens" in item or "completion_tokens" in item:
                usage = f"  ({item.get('prompt_tokens', 0)} prompt + {item.get('completion_tokens', 0)} completion tokens)"
            lines.append(Text(f"{role}{usage}", style=f"bold {_ROLE_STYLE.get(role, 'white')}"))
            lines.append(Text(content))
        console.print(Panel(Group(*lines), title=f"{number}. {state or '(no state)'}", title_align="left"))
