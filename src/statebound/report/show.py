"""Print one episode's trajectory state by state (rich), with the choices choice states made."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from statebound.contract.result import EpisodeResult
from statebound.flow.events import refused_by_limit
from statebound.report.metrics import group_label

__all__ = ["choice_lines", "render_episode"]

_ROLE_STYLE = {"assistant": "green", "user": "cyan", "tool": "yellow", "system": "magenta"}
_SHOWN_CANDIDATES = 6  # a longer list shows the picked one and the best-scored others
_CANDIDATE_CHARS = 100


def _clip(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= _CANDIDATE_CHARS else flat[: _CANDIDATE_CHARS - 3] + "..."


def choice_lines(choice: Mapping[str, Any], *, shown: int = _SHOWN_CANDIDATES) -> list[str]:
    """A recorded choice (``{"name", "method", "candidates", "scores", "picked"}``) as lines: a
    heading, then the candidates (best score first when scored), the picked one marked ``>``. Of a
    long list, the picked one and the best others are shown, and the rest counted."""
    candidates = [str(c) for c in choice.get("candidates") or ()]
    scores = choice.get("scores")
    picked = choice.get("picked")
    order = list(range(len(candidates)))
    if scores is not None:
        order.sort(key=lambda i: float("-inf") if scores[i] is None else -scores[i])
    keep = order[:shown]
    if isinstance(picked, int) and picked not in keep and 0 <= picked < len(candidates):
        keep = [*order[: shown - 1], picked]
    what = "nothing to choose from" if not candidates else (
        f"{len(candidates)} candidate{'s' if len(candidates) != 1 else ''}")
    lines = [f"choice {choice.get('name', '?')} by {choice.get('method', '?')}: {what}"
             + ("" if picked is not None or not candidates else ", none picked")]
    width = max((len(_clip(candidates[i])) for i in keep), default=0)
    for i in keep:
        score = "" if scores is None else ("-inf" if scores[i] is None else f"{scores[i]:.3f}")
        mark = ">" if i == picked else " "
        lines.append(f"  {mark} {_clip(candidates[i]).ljust(width)}  {score}".rstrip())
    if len(candidates) > len(keep):
        rest = len(candidates) - len(keep)
        lines.append(f"    ... {rest} more" + (" (lower scores)" if scores is not None else ""))
    return lines


def render_episode(result: EpisodeResult, *, console: Any = None, max_chars: int = 2000) -> None:
    """One panel per visit to a state, with each entry's role, text and token usage."""
    from rich.console import Console, Group
    from rich.panel import Panel
    from rich.text import Text

    console = console or Console()
    outcome = "success" if result.success else "failure"
    refused = refused_by_limit(result.events)
    console.rule(
        f"[bold]{result.task}[/] - {group_label({'agent': result.agent, 'model': result.model})} "
        f"seed {result.seed}: {outcome}, reward {result.reward:g}, {result.turns} turns, "
        f"exit {result.exit_state} ({result.exit_reason.value}{'; ' + refused if refused else ''})"
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
            if isinstance(choice := item.get("choice"), Mapping):
                lines.append(Text("\n".join(choice_lines(choice)), style="magenta"))
        console.print(Panel(Group(*lines), title=f"{number}. {state or '(no state)'}", title_align="left"))
