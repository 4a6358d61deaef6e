"""One stored episode read for people (``statebound show``, ``statebound view``): its steps with
the action each ran as the environment ran it, what it obtained, and the task's gold.

A stored trajectory holds the text of each history entry; the action an environment ran (the SQL,
the shell command, the game command) is kept beside it, in the entry itself (``action``) or in the
``message_added`` event of the same history index (``data.action`` / ``data.command``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from statebound.contract.benchmark import Reference
from statebound.contract.result import EpisodeResult

__all__ = ["Reference", "Step", "action_of", "best_first", "obtained", "reference_for", "steps"]

_OBSERVATION_LABEL = re.compile(r"^Observation(?: \d+)?: ")


@dataclass(frozen=True, slots=True)
class Step:
    """One history entry: where (``state``, its ``visit``), who (``role``, ``source``), the text,
    the action it ran (``None`` for entries that ran none), whether it ran without error, the
    choice it made and the tokens of the model call behind it."""

    index: int
    state: str | None
    visit: int
    role: str
    source: str | None
    content: str
    action: str | None
    ok: bool | None
    choice: Mapping[str, Any] | None
    prompt_tokens: int | None
    completion_tokens: int | None

    @property
    def is_prompt(self) -> bool:
        """Text the model was shown before replying (the task, instructions, prompts)."""
        return self.role in ("user", "system") and self.source != "tool"


def best_first(choice: Mapping[str, Any]) -> list[int]:
    """The indices of a recorded choice's candidates, best score first (unscored ones last; in
    their own order when the choice was not scored)."""
    scores = choice.get("scores")
    order = list(range(len(choice.get("candidates") or ())))
    if scores is not None:
        order.sort(key=lambda i: float("inf") if scores[i] is None else -scores[i])
    return order


def _event_actions(events: list[dict[str, Any]]) -> dict[int, tuple[str, str]]:
    """History index -> (content, action) from the ``message_added`` events that carry an action."""
    found = {}
    for event in events:
        data = event.get("data")
        if event.get("kind") == "message_added" and isinstance(data, Mapping) and isinstance(event.get("index"), int):
            action = data.get("action", data.get("command"))
            if isinstance(action, str):
                found[event["index"]] = (str(event.get("content", "")), action)
    return found


def action_of(item: Mapping[str, Any], event_action: tuple[str, str] | None) -> str | None:
    """The action a trajectory entry ran: its own ``action``, else its event's when the event is
    about the same text (a history edited later keeps its indices, not its texts)."""
    if isinstance(item.get("action"), str):
        return item["action"]
    if event_action is not None and event_action[0] == str(item.get("content", "")):
        return event_action[1]
    return None


def steps(result: EpisodeResult) -> list[Step]:
    """The episode's history entries in order, each with its action and its state's visit number."""
    actions = _event_actions(result.events)
    visits: dict[str | None, int] = {}
    previous: object = object()
    out = []
    for index, item in enumerate(result.trajectory):
        state = item.get("state")
        if state != previous:
            visits[state] = visits.get(state, 0) + 1
            previous = state
        choice = item.get("choice")
        out.append(Step(
            index=index, state=state, visit=visits[state], role=str(item.get("role", "?")),
            source=item.get("source"), content=str(item.get("content", "")),
            action=action_of(item, actions.get(index)), ok=item.get("ok"),
            choice=choice if isinstance(choice, Mapping) else None,
            prompt_tokens=item.get("prompt_tokens"), completion_tokens=item.get("completion_tokens"),
        ))
    return out


def obtained(result: EpisodeResult) -> str | None:
    """What the episode ended with, as graded: the agent's answer when it gives one, else the last
    observation (what ``submit`` scores), without its ``Observation:`` label."""
    if result.meta.get("answer") is not None:
        return str(result.meta["answer"])
    for item in reversed(result.trajectory):
        if item.get("answer") is not None:
            return str(item["answer"])
    for item in reversed(result.trajectory):
        if item.get("role") == "tool":
            return _OBSERVATION_LABEL.sub("", str(item.get("content", "")))
    return None


def reference_for(benchmark: str, options: Mapping[str, Any], task: str) -> Reference | str | None:
    """``task``'s gold and expected result from ``benchmark`` built with the run's ``options``;
    ``None`` when the benchmark keeps no gold (or is not installed here), or one line saying why it
    could not be made (e.g. the MariaDB server the run used is down)."""
    from statebound.bench.registry import benchmark_names, load_benchmark

    if benchmark not in benchmark_names():
        return None
    try:
        return load_benchmark(benchmark, options).benchmark.reference(task)
    except Exception as error:  # noqa: BLE001 - a reader shows the rest of the episode anyway
        return f"{type(error).__name__}: {' '.join(str(error).split())}"
