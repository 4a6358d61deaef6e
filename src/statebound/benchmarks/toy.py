"""``toy``: arithmetic questions graded exactly, a benchmark small enough to read in one go.

It exercises the harness (runner, store, reports, Ray) end to end without a real environment or
model, and shows what a benchmark declares: options, tasks, an environment per episode, grading,
and agents. The environment takes answers (``Answer: <integer>``) as actions. Two agents:
``direct`` asks the model once; ``verify`` asks, then asks it to check its answer. :func:`oracle`
answers the toy prompts deterministically (it makes a seeded mistake on some hard first
attempts, so agents differ); use it as the model ``function:statebound.benchmarks.toy:oracle``.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from statebound.contract.benchmark import (
    AgentSpec,
    Benchmark,
    BenchmarkOptions,
    Grade,
    Reference,
    Task,
)
from statebound.contract.trace import ExitReason, Trace, TraceEntry
from statebound.envs.base import Score, StepResult
from statebound.errors import DefinitionError
from statebound.llm.base import LLM, Request, Usage, chat
from statebound.llm.testing import request_text

__all__ = ["AGENTS", "AnswerEnv", "Toy", "ToyOptions", "jittery_oracle", "oracle", "parse_answer", "slow_oracle"]

_QUESTION = re.compile(r"What is (-?\d+) ([+*]) (-?\d+)\?")
_TASK_ID = re.compile(r"task (toy-\d+)", re.IGNORECASE)
_ANSWER = re.compile(r"Answer:\s*(-?\d+)")
_SOLVE = "Solve the task. Reply with 'Answer: <integer>'.\n{task}"
_VERIFY = "Check your answer to {task} Reply with 'Answer: <integer>'."


def parse_answer(text: str) -> int | None:
    """The integer after the last ``Answer:`` in ``text``, or None."""
    found = _ANSWER.findall(text)
    return int(found[-1]) if found else None


class ToyOptions(BenchmarkOptions):
    count: int = Field(20, ge=1, le=100_000, description="how many tasks")
    seed: int = Field(1234, ge=-(2**63), le=2**63 - 1, description="the seed the tasks are drawn with")


def _make_tasks(count: int, seed: int) -> list[Task]:
    rng = random.Random(seed)
    tasks = []
    for index in range(count):
        hard = index % 2 == 1
        high = 99 if hard else 9
        a, b = rng.randint(1, high), rng.randint(1, high)
        op = "*" if index % 3 == 0 else "+"
        answer = a * b if op == "*" else a + b
        meta = {"answer": answer, "hardness": "hard" if hard else "easy", "task_type": "mul" if op == "*" else "add"}
        tasks.append(Task(id=f"toy-{index:03d}", question=f"What is {a} {op} {b}?", meta=meta))
    return tasks


@dataclass
class AnswerEnv:
    """Takes answers as actions: an action that holds ``Answer: <integer>`` is accepted."""

    tasks: dict[str, Task]
    max_turns: int | None = None
    answer: int | None = field(default=None, init=False)
    actions: int = field(default=0, init=False)
    failed: int = field(default=0, init=False)
    _task: Task | None = field(default=None, init=False)

    def reset(self, task_id: str) -> str:
        self._task = self.tasks[task_id]
        self.answer, self.actions, self.failed = None, 0, 0
        return f"task {task_id}: {self._task.question}"

    def step(self, action: str) -> StepResult:
        if self.max_turns is not None and self.actions >= self.max_turns:
            return StepResult("No more answers: the turn limit is reached.", ok=False, done=True)
        self.actions += 1
        parsed = parse_answer(action)
        self.failed += parsed is None
        self.answer = parsed if parsed is not None else self.answer
        return StepResult("Noted." if parsed is not None else "No 'Answer: <integer>' found.", ok=parsed is not None)

    def score(self) -> Score:
        if self._task is None:
            raise DefinitionError("no episode is running; call reset(task_id) first")
        success = self.answer == self._task.meta["answer"]
        return Score(reward=float(success), success=success)

    def close(self) -> None:
        self._task = None


class Toy(Benchmark[ToyOptions, AnswerEnv]):
    name = "toy"
    summary = "arithmetic questions graded exactly (for testing the harness)"
    Options = ToyOptions

    def __init__(self, options: ToyOptions) -> None:
        super().__init__(options)
        self._tasks = _make_tasks(options.count, options.seed)

    def tasks(self) -> Sequence[Task]:
        return self._tasks

    def make_env(self, *, max_turns: int | None, **settings: Any) -> AnswerEnv:
        return AnswerEnv({task.id: task for task in self._tasks}, max_turns=max_turns)

    def reference(self, task_id: str) -> Reference | None:
        """The exact answer."""
        answer = next((task.meta["answer"] for task in self._tasks if task.id == task_id), None)
        return None if answer is None else Reference(gold=f"Answer: {answer}", expected=str(answer))

    def grade(self, env: AnswerEnv, task: Task, trace: Trace) -> Grade:
        score = env.score()
        return Grade(reward=score.reward, success=score.success, turns=env.actions,
                     error_rate=env.failed / env.actions if env.actions else 0.0)


@dataclass(frozen=True, slots=True)
class AskAgent:
    """Sends each prompt of ``steps`` (state, template) to the model and its reply to the environment."""

    steps: tuple[tuple[str, str], ...]
    seed: int

    async def __call__(self, task: str, *, llm: LLM, env: AnswerEnv) -> Trace:
        entries: list[TraceEntry] = [TraceEntry(state=self.steps[0][0], role="user", content=task, source="task")]
        usage = Usage()
        for state, template in self.steps:
            prompt = template.format(task=task)
            entries.append(TraceEntry(state=state, role="user", content=prompt, source="instruction"))
            completion = await llm.complete(chat(("user", prompt), max_tokens=32, seed=self.seed))
            usage = usage + completion.usage
            entries.append(TraceEntry(state=state, role="assistant", content=completion.text, source="llm",
                                      usage=completion.usage))
            result = await asyncio.to_thread(env.step, completion.text)
            entries.append(TraceEntry(state=state, role="tool", content=result.observation, source="tool", ok=result.ok))
            if result.done:
                return Trace(entries=tuple(entries), exit=ExitReason.TURN_LIMIT, exit_state=state, usage=usage)
        return Trace(entries=tuple(entries), exit=ExitReason.FINAL, exit_state=self.steps[-1][0], usage=usage,
                     answer=None if env.answer is None else str(env.answer))


def _asking(*steps: tuple[str, str]) -> AgentSpec[ToyOptions]:
    return AgentSpec(build=lambda setup: AskAgent(steps, setup.seed),
                     summary=" then ".join(f"{state}: one model call" for state, _ in steps))


AGENTS: dict[str, AgentSpec[ToyOptions]] = {
    "direct": _asking(("Solve", _SOLVE)),
    "verify": _asking(("Solve", _SOLVE), ("Verify", _VERIFY)),
}


def oracle(request: Request) -> str:
    """Answers toy prompts; wrong (off by one) on a seeded share of first attempts at hard tasks."""
    text = request_text(request)
    match = _QUESTION.search(text)
    if match is None:
        return "I cannot parse this task."
    a, op, b = int(match[1]), match[2], int(match[3])
    value = a * b if op == "*" else a + b
    first_attempt = text.startswith("Solve")
    if first_attempt and max(a, b) >= 10 and (a + b + (request.seed or 0)) % 3 == 0:
        value += 1
    task = _TASK_ID.search(text)
    return f"Thought: task {task[1] if task else '?'}: compute {a} {op} {b}. Answer: {value}"


async def slow_oracle(request: Request) -> str:
    """:func:`oracle` after a 50 ms pause (for interrupt/resume tests)."""
    await asyncio.sleep(0.05)
    return oracle(request)


async def jittery_oracle(request: Request) -> str:
    """:func:`oracle` after a pause of 0-20 ms that varies with the prompt (shuffles completion order)."""
    text = request_text(request)
    await asyncio.sleep(random.Random(text).uniform(0, 0.02))
    return oracle(request)
