"""One episode as its page shows it: the visits to states with their steps (prompts, replies,
actions as run, observations, choices with every candidate and score), the outcome (gold,
expected, obtained, reward) and the way through the state machine."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from statebound.bench.plan import RunConfig
from statebound.contract.result import CALLS_KEY, VARS_KEY, EpisodeResult
from statebound.report.episode_detail import Reference, Step, best_first, reference_for, steps
from statebound.report.show import outcome_lines
from statebound.view.flowmap import Visits, diagram_svg, visits
from statebound.view.runs import outcome, task_text

__all__ = ["Candidate", "EpisodePage", "StateVisit", "episode_page"]


@dataclass(frozen=True, slots=True)
class Candidate:
    text: str
    score: str  # formatted, "" when the choice was not scored
    picked: bool


@dataclass(frozen=True, slots=True)
class StateVisit:
    """The steps taken during one visit to a state (``number`` counts visits in the episode) and
    the model calls made there (each a dict: ``kind``, tokens, ``seconds``)."""

    number: int
    state: str | None
    visit: int
    steps: list[Step]
    calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def seconds(self) -> float | None:
        """Seconds its model calls took (``None`` when none was timed)."""
        timed = [call["seconds"] for call in self.calls if isinstance(call.get("seconds"), int | float)]
        return sum(timed) if timed else None


@dataclass(frozen=True, slots=True)
class EpisodePage:
    result: EpisodeResult
    outcome: str
    task: str | None
    visits: list[StateVisit]
    summary: list[tuple[str, str]]  # gold, expected, obtained, reward, graded figures
    way: Visits
    diagram: str | None  # SVG
    vars: dict[str, Any] | None  # the flow variables where the episode ended
    calls: list[dict[str, Any]]  # every model call, in order, with its state, tokens and seconds

    @property
    def model_seconds(self) -> float | None:
        """Seconds all timed model calls took."""
        timed = [call["seconds"] for call in self.calls if isinstance(call.get("seconds"), int | float)]
        return sum(timed) if timed else None

    def candidates(self, choice: Mapping[str, Any]) -> list[Candidate]:
        return candidates(choice)


def candidates(choice: Mapping[str, Any]) -> list[Candidate]:
    """Every candidate of a recorded choice, best score first when scored, the pick marked."""
    texts = [str(c) for c in choice.get("candidates") or ()]
    scores = choice.get("scores")
    picked = choice.get("picked")
    return [Candidate(texts[i], "" if scores is None else "-inf" if scores[i] is None else f"{scores[i]:.3f}",
                      i == picked) for i in best_first(choice)]


def _visits(taken: list[Step], calls: list[dict[str, Any]]) -> list[StateVisit]:
    """The steps grouped by visit, each visit with the model calls made in it: a call goes to the
    visit of its state at or after the one the call before went to (calls come in order)."""
    groups: list[StateVisit] = []
    for step in taken:
        if not groups or groups[-1].state != step.state or groups[-1].visit != step.visit:
            groups.append(StateVisit(len(groups) + 1, step.state, step.visit, []))
        groups[-1].steps.append(step)
    at = 0
    for call in calls:
        found = next((i for i in range(at, len(groups)) if groups[i].state == call.get("state")), None)
        if found is not None:
            groups[found].calls.append(call)
            at = found
    return groups


def _meta_calls(result: EpisodeResult) -> list[dict[str, Any]]:
    calls = result.meta.get(CALLS_KEY)
    return [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []


@lru_cache(maxsize=256)
def _reference(benchmark: str, options: str, task: str) -> Reference | str | None:
    return reference_for(benchmark, json.loads(options), task)


def episode_page(result: EpisodeResult, config: RunConfig | None, *, diagram: bool = True,
                 diagrams: Mapping[str, str] | None = None) -> EpisodePage:
    """The page of ``result`` from run ``config`` (the gold and the diagram need it; ``diagrams``:
    the flow diagrams the run stored, by agent)."""
    reference = None
    svg = None
    way = visits(result)
    if config is not None:
        options = json.dumps(config.benchmark_options, sort_keys=True, default=str)
        reference = _reference(config.benchmark, options, result.task)
        if diagram:
            svg = diagram_svg(config.benchmark, config.benchmark_options, result.agent, result.task,
                              config.limits.max_turns, way.states, stored=(diagrams or {}).get(result.agent))
    calls = _meta_calls(result)
    stored_vars = result.meta.get(VARS_KEY)
    return EpisodePage(result, outcome(result), task_text(result), _visits(steps(result), calls),
                       outcome_lines(result, reference), way, svg,
                       stored_vars if isinstance(stored_vars, dict) else None, calls)

