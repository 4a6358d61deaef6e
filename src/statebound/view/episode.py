"""One episode as its page shows it: the visits to states with their steps (prompts, replies,
actions as run, observations, choices with every candidate and score), the outcome (gold,
expected, obtained, reward) and the way through the state machine."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from statebound.bench.plan import RunConfig
from statebound.contract.result import EpisodeResult
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
    """The steps taken during one visit to a state (``number`` counts visits in the episode)."""

    number: int
    state: str | None
    visit: int
    steps: list[Step]


@dataclass(frozen=True, slots=True)
class EpisodePage:
    result: EpisodeResult
    outcome: str
    task: str | None
    visits: list[StateVisit]
    summary: list[tuple[str, str]]  # gold, expected, obtained, reward, graded figures
    way: Visits
    diagram: str | None  # SVG

    def candidates(self, choice: Mapping[str, Any]) -> list[Candidate]:
        return candidates(choice)


def candidates(choice: Mapping[str, Any]) -> list[Candidate]:
    """Every candidate of a recorded choice, best score first when scored, the pick marked."""
    texts = [str(c) for c in choice.get("candidates") or ()]
    scores = choice.get("scores")
    picked = choice.get("picked")
    return [Candidate(texts[i], "" if scores is None else "-inf" if scores[i] is None else f"{scores[i]:.3f}",
                      i == picked) for i in best_first(choice)]


def _visits(taken: list[Step]) -> list[StateVisit]:
    groups: list[StateVisit] = []
    for step in taken:
        if not groups or groups[-1].state != step.state or groups[-1].visit != step.visit:
            groups.append(StateVisit(len(groups) + 1, step.state, step.visit, []))
        groups[-1].steps.append(step)
    return groups


@lru_cache(maxsize=256)
def _reference(benchmark: str, options: str, task: str) -> Reference | str | None:
    return reference_for(benchmark, json.loads(options), task)


def episode_page(result: EpisodeResult, config: RunConfig | None, *, diagram: bool = True) -> EpisodePage:
    """The page of ``result`` from run ``config`` (the gold and the diagram need it)."""
    reference = None
    svg = None
    way = visits(result)
    if config is not None:
        options = json.dumps(config.benchmark_options, sort_keys=True, default=str)
        reference = _reference(config.benchmark, options, result.task)
        if diagram:
            svg = diagram_svg(config.benchmark, config.benchmark_options, result.agent, result.task,
                              config.limits.max_turns, way.states)
    return EpisodePage(result, outcome(result), task_text(result), _visits(steps(result)),
                       outcome_lines(result, reference), way, svg)

