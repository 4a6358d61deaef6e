"""The question-answering environment: tools (Calculator, or Search and Lookup) plus grading.

Actions are ReAct-style ``Tool[argument]`` strings (``Search[Milhouse]``, ``Calculator[3*4]``,
``Finish[Richard Nixon]``), or a tool name and argument through :meth:`QAEnvironment.call` (what
the spec agents use: ``[Action] Search [Action Input] Milhouse``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

from statebound.envs.base import Score, StepResult
from statebound.envs.observation import DEFAULT_MAX_OBSERVATION_CHARS, bound_observation
from statebound.envs.qa.calculator import calculate
from statebound.envs.qa.corpus import Corpus
from statebound.envs.qa.datasets import QAItem
from statebound.envs.qa.scoring import (
    exact_match,
    extract_final_number,
    f1_score,
    numbers_equal,
)
from statebound.envs.qa.wiki import WikiTools
from statebound.errors import DefinitionError

__all__ = ["FINISH", "AnswerKind", "QAEnvironment", "grade_answer"]

AnswerKind = Literal["text", "number"]
FINISH = "Finish"
_ACTION = re.compile(r"^\s*(\w+)\s*\[(.*)\]\s*$", re.DOTALL)


def grade_answer(prediction: str | None, gold: str, *, kind: AnswerKind) -> Score:
    """EM/F1 for text answers; numeric equality of the final number for GSM8K-style answers."""
    if prediction is None:
        return Score(reward=0.0, success=False, metrics={"em": 0.0, "f1": 0.0})
    if kind == "number":
        correct = numbers_equal(extract_final_number(prediction), Decimal(gold))
        value = 1.0 if correct else 0.0
        return Score(reward=value, success=correct, metrics={"em": value, "f1": value})
    em = 1.0 if exact_match(prediction, gold) else 0.0
    return Score(reward=em, success=em == 1.0, metrics={"em": em, "f1": f1_score(prediction, gold)})


@dataclass
class QAEnvironment:
    """One episode at a time over ``items``; ``tools`` names the tools offered (case-insensitive).

    ``QAEnvironment(items=load_gsm8k(), tools=("Calculator",), kind="number")`` or
    ``QAEnvironment(items=load_hotpotqa(), tools=("Search", "Lookup"), corpus=hotpot_distractor_corpus())``.
    """

    items: Sequence[QAItem]
    tools: Sequence[str] = ("Search", "Lookup")
    kind: AnswerKind = "text"
    corpus: Corpus | None = None
    max_actions: int | None = None  # the turn limit: tool calls after it are refused
    max_observation_chars: int | None = DEFAULT_MAX_OBSERVATION_CHARS  # longer ones are cut, with a note
    answer: str | None = field(default=None, init=False)
    actions: int = field(default=0, init=False)
    failed_actions: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._by_id: Mapping[str, QAItem] = {item.id: item for item in self.items}
        self._item: QAItem | None = None
        self._wiki = WikiTools(self.corpus) if self.corpus is not None else None
        available = {"calculator"} | ({"search", "lookup"} if self._wiki is not None else set())
        unknown = [t for t in self.tools if t.lower() not in available]
        if unknown:
            hint = " (Search and Lookup need corpus=...)" if self._wiki is None else ""
            raise DefinitionError(f"unknown or unavailable tools {unknown}; offer from {sorted(available)}{hint}")
        self._offered = frozenset(t.lower() for t in self.tools)

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(self.tools)

    @property
    def page_title(self) -> str | None:
        """The title of the page the latest successful Search found (None before one)."""
        page = self._wiki.page if self._wiki is not None else None
        return page.title if page is not None else None

    @property
    def item(self) -> QAItem:
        if self._item is None:
            raise DefinitionError("no episode is running; call reset(task_id) first")
        return self._item

    def reset(self, task_id: str) -> str:
        try:
            self._item = self._by_id[task_id]
        except KeyError:
            raise DefinitionError(f"unknown task id {task_id!r} (this environment has {len(self._by_id)} tasks)") from None
        self.answer, self.actions, self.failed_actions = None, 0, 0
        if self._wiki is not None:
            self._wiki.reset()
        return self._item.question

    def call(self, tool: str, argument: str) -> StepResult:
        """Run ``tool`` on ``argument``; an unknown tool is a failed action with a helpful message."""
        if tool.strip().lower() == FINISH.lower():
            self.actions += 1
            self.answer = argument.strip()
            return StepResult(observation=f"Episode finished, answer: {self.answer}", done=True)
        return self._count(self._run(tool, argument, self._wiki))

    async def call_parallel(self, calls: Sequence[tuple[str, str]]) -> list[StepResult]:
        """Run the ``(tool, argument)`` calls of one parallel step (PASS) at the same time, each in
        a worker thread. Each sees the episode as it was before the step (a Lookup looks in the page
        of an earlier step, not in one a Search beside it finds). Afterwards the last page is the one
        the step's last successful Search found; when none did, Lookup goes on where the step's last
        Lookup left it."""
        forks = [self._wiki.fork() if self._wiki is not None else None for _ in calls]
        results = list(await asyncio.gather(
            *(asyncio.to_thread(self._run, tool, argument, fork) for (tool, argument), fork in zip(calls, forks))
        ))
        if self._wiki is not None:
            page, state = self._wiki.page, self._wiki.state()
            found = [fork for fork in forks if fork is not None and fork.page is not page]
            moved = [fork for fork in forks if fork is not None and fork.state() != state]
            if found or moved:
                self._wiki.adopt((found or moved)[-1])
        return [self._count(result) for result in results]

    def _count(self, result: StepResult) -> StepResult:
        self.actions += 1
        self.failed_actions += 0 if result.ok else 1
        return result

    def _run(self, tool: str, argument: str, wiki: WikiTools | None) -> StepResult:
        """One tool call against ``wiki`` (the episode's, or a fork of it); counts nothing."""
        name, argument = tool.strip().lower(), argument.strip()
        if self.max_actions is not None and self.actions >= self.max_actions:
            return StepResult(observation="No more tool calls: the turn limit is reached. Give your answer.", ok=False)
        if name not in self._offered:
            offered = ", ".join([*self.tools, FINISH])
            return StepResult(observation=f"Invalid action: {tool.strip()!r} is not a tool here; use one of {offered}.", ok=False)
        if name == "calculator":
            observation = calculate(argument)
        else:
            assert wiki is not None  # Search and Lookup are offered only with a corpus
            observation = wiki.search(argument) if name == "search" else wiki.lookup(argument)
        return StepResult(observation=bound_observation(observation, self.max_observation_chars),
                          ok=not observation.startswith("Error:"))

    def step(self, action: str) -> StepResult:
        match = _ACTION.match(action)
        if match is None:
            self.actions += 1
            self.failed_actions += 1
            return StepResult(observation=f"Invalid action: {action.strip()!r}; write Tool[argument].", ok=False)
        return self.call(match.group(1), match.group(2))

    def submit(self, answer: str | None) -> None:
        """Record the final answer without counting it as an action (for agents that parse it)."""
        self.answer = answer

    def score(self) -> Score:
        return grade_answer(self.answer, self.item.answer, kind=self.kind)

    def close(self) -> None:
        self._item = None
