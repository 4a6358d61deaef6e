"""The ``gsm8k`` and ``hotpotqa`` benchmarks for the harness (``statebound eval gsm8k --agent cot``).

- ``gsm8k``: all 1319 test problems, a Calculator tool, graded by the final number.
- ``hotpotqa``: the 100 distractor questions with Search and Lookup over their pooled paragraphs
  (or ``corpus=PATH`` to a JSONL corpus), or ``split=dev`` for the 7405 dev questions without tools
  (non-agent methods only); graded by exact match, with F1 in ``meta``.

``EpisodeResult.meta`` carries ``em``, ``f1``, the monitor's ``violations`` and ``corrections``, and
for self-consistency ``votes`` / ``fell_back``. Reports add the columns of ``GSM8K_COLUMNS`` /
``HOTPOTQA_COLUMNS`` after the generic ones (SR % is the paper's exact-match accuracy; Turns is
LLM calls per question).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from statebound.agents.qa.agents import (
    HYBRIDS,
    NON_AGENT_STYLES,
    STYLES,
    QAAgentOptions,
    parse_agent,
    run_agent,
)
from statebound.agents.qa.prompts import Dataset
from statebound.bench.columns import MetaColumn
from statebound.bench.types import EpisodeLimits, EpisodeResult, Task
from statebound.envs.qa.corpus import Corpus, hotpot_distractor_corpus, load_jsonl_corpus
from statebound.envs.qa.datasets import QAItem, load_gsm8k, load_hotpotqa
from statebound.envs.qa.env import AnswerKind, QAEnvironment, grade_answer
from statebound.errors import DefinitionError
from statebound.llm.base import LLM

__all__ = ["GSM8K_COLUMNS", "HOTPOTQA_COLUMNS", "QABenchmark", "make_gsm8k", "make_hotpotqa"]

# The monitor's counts per question (mean over the episodes that ran; crashed ones have none).
_MONITOR_COLUMNS = (
    MetaColumn("violations", "Violations/q"),
    MetaColumn("corrections", "Corrections/q"),
    MetaColumn("env_calls", "Tool calls/q"),
    MetaColumn("context_overflow", "Over context", format="{:.0f}", aggregate="sum"),
)
# GSM8K accuracy is SR % (success = the final number matches), so no separate column.
GSM8K_COLUMNS: tuple[MetaColumn, ...] = _MONITOR_COLUMNS
# Paper Table 1 reports exact match; F1 is HotpotQA's second official metric. Crashed = 0.
HOTPOTQA_COLUMNS: tuple[MetaColumn, ...] = (
    MetaColumn("em", "EM %", scale=100, missing=0.0),
    MetaColumn("f1", "F1 %", scale=100, missing=0.0),
    *_MONITOR_COLUMNS,
)


@dataclass
class QABenchmark:
    """A QA dataset, the tools its agents may use, and how answers are graded."""

    name: str
    dataset: Dataset
    items: Sequence[QAItem]
    tools: tuple[str, ...]
    kind: AnswerKind
    options: QAAgentOptions
    corpus: Corpus | None = None
    _by_id: dict[str, QAItem] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._by_id = {item.id: item for item in self.items}

    def tasks(self) -> Sequence[Task]:
        return [Task(id=item.id, question=item.question, meta=_task_meta(item)) for item in self.items]

    def agents(self) -> Sequence[str]:
        if not self.tools:
            return NON_AGENT_STYLES
        return STYLES + HYBRIDS

    def _check_agent(self, agent: str) -> None:
        first, second = parse_agent(agent)
        if not self.tools and any(s not in NON_AGENT_STYLES for s in (first, second) if s):
            raise DefinitionError(
                f"{self.name} ({len(self.items)} questions, no tools) runs only {', '.join(NON_AGENT_STYLES)}; "
                f"{agent!r} needs tools (use split=distractor)"
            )

    async def run_episode(
        self, task: Task, agent: str, llm: LLM, *, seed: int, limits: EpisodeLimits
    ) -> EpisodeResult:
        self._check_agent(agent)
        item = self._by_id.get(task.id)
        if item is None:
            raise DefinitionError(f"{self.name} has no task {task.id!r}")
        env = QAEnvironment(items=(item,), tools=self.tools, kind=self.kind, corpus=self.corpus)
        env.reset(item.id)
        options = replace(self.options, max_calls=max(1, limits.max_turns))
        started = time.monotonic()
        run = run_agent(agent, item.question, llm=llm, env=env, options=options, seed=seed)
        attempt = await (asyncio.wait_for(run, limits.timeout_s) if limits.timeout_s else run)
        score = grade_answer(attempt.answer, item.answer, kind=self.kind)
        meta: dict[str, Any] = {**_task_meta(item), **attempt.meta, **score.metrics,
                                "answer": attempt.answer, "gold": item.answer}
        return EpisodeResult(
            task=task.id,
            agent=agent,
            model=llm.model,
            seed=seed,
            reward=score.reward,
            success=score.success,
            turns=attempt.usage.calls,
            error_rate=env.failed_actions / env.actions if env.actions else 0.0,
            prompt_tokens=attempt.usage.prompt_tokens,
            completion_tokens=attempt.usage.completion_tokens,
            llm_calls=attempt.usage.calls,
            exit_state="Ans" if attempt.answer is not None else None,
            exit_reason="answered" if attempt.answer is not None else "no_answer",
            wall_seconds=time.monotonic() - started,
            meta=meta,
            trajectory=attempt.trace,
        )


def _task_meta(item: QAItem) -> dict[str, Any]:
    return {k: v for k, v in item.meta.items() if k in ("type", "level")}


def _options(dataset: Dataset, raw: dict[str, Any]) -> QAAgentOptions:
    converters = {"shots": int, "chunk_tokens": int, "max_calls": int, "k": int,
                  "sample_temperature": float, "alpha": float, "mode": str}
    unknown = sorted(set(raw) - set(converters))
    if unknown:
        raise DefinitionError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(converters))}")
    try:
        values = {k: converters[k](v) for k, v in raw.items()}
    except ValueError as exc:
        raise DefinitionError(f"bad option value: {exc}") from None
    return QAAgentOptions(dataset=dataset, **values)


def _limit(items: Sequence[QAItem], limit: Any) -> Sequence[QAItem]:
    return items[: int(limit)] if limit is not None else items


def make_gsm8k(*, limit: int | str | None = None, **options: Any) -> QABenchmark:
    """``gsm8k``: 1319 problems (``limit=N`` keeps the first N), Calculator tool, numeric grading."""
    return QABenchmark(
        name="gsm8k",
        dataset="gsm8k",
        items=_limit(load_gsm8k(), limit),
        tools=("Calculator",),
        kind="number",
        options=_options("gsm8k", options),
    )


def make_hotpotqa(
    *, split: str = "distractor", corpus: str | None = None, limit: int | str | None = None, **options: Any
) -> QABenchmark:
    """``hotpotqa``: ``split=distractor`` (100, Search/Lookup) or ``split=dev`` (7405, no tools)."""
    if split not in ("distractor", "dev"):
        raise DefinitionError(f"unknown HotpotQA split {split!r}; choose distractor (tools) or dev (no tools)")
    with_tools = split == "distractor" or corpus is not None
    return QABenchmark(
        name="hotpotqa",
        dataset="hotpotqa",
        items=_limit(load_hotpotqa(split), limit),  # type: ignore[arg-type]
        tools=("Search", "Lookup") if with_tools else (),
        kind="text",
        options=_options("hotpotqa", options),
        corpus=(load_jsonl_corpus(corpus) if corpus else hotpot_distractor_corpus()) if with_tools else None,
    )
