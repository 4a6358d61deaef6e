"""Print one episode's trajectory state by state (rich): each entry, the action it ran as the
environment ran it, the choices choice states made; then the gold, the expected and obtained
result and the reward. Lines stay within the terminal's width (rich wraps, long titles end in an
ellipsis)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from typing import Any

from statebound.contract.result import CALLS_KEY, VARS_KEY, EpisodeResult
from statebound.flow.events import refused_by_limit
from statebound.report.episode_detail import Reference, best_first, obtained, steps
from statebound.report.inert import CELL_LIMIT, inert_text
from statebound.report.metrics import group_label

__all__ = ["choice_lines", "outcome_lines", "render_episode"]

_ROLE_STYLE = {"assistant": "green", "user": "cyan", "tool": "yellow", "system": "magenta"}
_SHOWN_CANDIDATES = 6  # a longer list shows the picked one and the best-scored others
_CANDIDATE_CHARS = 100


def _clip(text: str) -> str:
    flat = " ".join(str(text)[: _CANDIDATE_CHARS * 4].split())
    return flat if len(flat) <= _CANDIDATE_CHARS else flat[: _CANDIDATE_CHARS - 3] + "..."


def choice_lines(choice: Mapping[str, Any], *, shown: int = _SHOWN_CANDIDATES) -> list[str]:
    """A recorded choice (``{"name", "method", "candidates", "scores", "picked"}``) as lines: a
    heading, then the candidates (best score first when scored), the picked one marked ``>``. Of a
    long list, the picked one and the best others are shown, and the rest counted."""
    candidates = [str(c) for c in choice.get("candidates") or ()]
    scores = choice.get("scores")
    picked = choice.get("picked")
    order = best_first(choice)
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


_NOT_FIGURES = ("answer", "gold", VARS_KEY, CALLS_KEY)  # shown on their own, or not a figure


def outcome_lines(result: EpisodeResult, reference: Reference | str | None) -> list[tuple[str, str]]:
    """(label, text) pairs: the gold, the expected and the obtained result, the reward and the
    grade's own figures (``reference`` a line saying why there is none when it could not be made)."""
    lines = []
    if isinstance(reference, Reference):
        lines.append(("gold", reference.gold))
        lines.append(("expected", reference.expected if reference.expected is not None
                      else "(not made again here; the grade's figures below say how it compared)"))
    elif isinstance(reference, str):
        lines.append(("gold", f"(could not be read: {reference})"))
    lines.append(("obtained", "(nothing)" if (got := obtained(result)) is None else got))
    lines.append(("reward", f"{result.reward:g} ({'success' if result.success else 'failure'})"))
    figures = {key: value for key, value in result.meta.items() if key not in _NOT_FIGURES}
    if figures:
        lines.append(("graded", ", ".join(f"{key} {value:g}" if isinstance(value, float) else f"{key} {value}"
                                           for key, value in figures.items())))
    return lines


def render_episode(result: EpisodeResult, *, console: Any = None, max_chars: int = 2000,
                   reference: Reference | str | None = None) -> None:
    """One panel per visit to a state, with each entry's role, text, token usage and the action it
    ran; then a panel with the gold, expected and obtained result and the reward."""
    from rich.console import Console, Group
    from rich.panel import Panel
    from rich.text import Text

    console = console or Console(width=shutil.get_terminal_size().columns)
    outcome = "success" if result.success else "failure"
    refused = refused_by_limit(result.events)
    console.rule(inert_text(
        f"{result.task} - {group_label({'agent': result.agent, 'model': result.model})} "
        f"seed {result.seed}: {outcome}, reward {result.reward:g}, {result.turns} turns, "
        f"exit {result.exit_state} ({result.exit_reason.value}{'; ' + refused if refused else ''})",
        "bold", limit=CELL_LIMIT, one_line=True))
    if result.error:
        console.print(inert_text(f"crashed: {result.error}", "red", limit=max_chars))
    visits: list[tuple[str | None, list[Any]]] = []
    for step in steps(result):
        if not visits or visits[-1][0] != step.state:
            visits.append((step.state, []))
        visits[-1][1].append(step)
    for number, (state, taken) in enumerate(visits, start=1):
        lines = []
        for step in taken:
            usage = ""
            if step.prompt_tokens is not None or step.completion_tokens is not None:
                usage = f"  ({step.prompt_tokens or 0} prompt + {step.completion_tokens or 0} completion tokens)"
            lines.append(inert_text(f"{step.role}{usage}", f"bold {_ROLE_STYLE.get(step.role, 'white')}", one_line=True,
                                    limit=CELL_LIMIT))
            if step.action is not None:
                lines.append(Text.assemble(("ran: ", "bold"), inert_text(step.action, limit=max_chars)))
            lines.append(inert_text(step.content, limit=max_chars))
            if step.choice is not None:
                lines.append(inert_text("\n".join(choice_lines(step.choice)), "magenta"))
        title = inert_text(f"{number}. {state or '(no state)'}", limit=CELL_LIMIT, one_line=True)
        console.print(Panel(Group(*lines), title=title, title_align="left"))
    summary = [Text.assemble((f"{label}: ", "bold"), inert_text(text, limit=max_chars))
               for label, text in outcome_lines(result, reference)]
    console.print(Panel(Group(*summary), title="outcome", title_align="left"))
