"""``gsm8k`` and ``hotpotqa``: question answering with the behaviour-spec agents (Crouse et al. 2023).

- ``gsm8k``: the 1319 test problems with a Calculator tool, graded by the final number.
- ``hotpotqa``: the 100 distractor questions with Search and Lookup over their pooled paragraphs
  (or ``corpus=PATH``, a JSONL corpus), or ``split=dev`` for the 7405 dev questions without tools
  (``direct`` and ``cot`` only); graded by exact match, with F1 in ``meta``.

Options: ``limit`` (the first N questions), the agents' ``shots``, ``mode`` (the monitor's),
``chunk_tokens``, ``max_calls`` (model calls per run before the monitor wraps up), ``k`` and
``sample_temperature`` (self-consistency), ``alpha`` (PASS's length penalty). A turn is one tool
call; by default the number of tool calls is not limited (``max_calls`` bounds a run). Results
carry ``em``, ``f1``, the monitor's ``violations`` and ``corrections``, and for self-consistency
``votes`` / ``fell_back``; reports add EM %, F1 % (HotpotQA) and the monitor's counts. SR % is the
paper's exact-match accuracy; the Turns column is model calls per question.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from functools import cached_property
from typing import Any, ClassVar

from statebound.agents.qa.options import Gsm8kOptions, HotpotOptions, QAOptions
from statebound.agents.qa.prompts import Dataset
from statebound.contract.benchmark import Benchmark, Grade, Reference, Task
from statebound.contract.columns import MetaColumn
from statebound.contract.trace import Trace
from statebound.envs.qa.corpus import Corpus, hotpot_distractor_corpus, load_jsonl_corpus
from statebound.envs.qa.datasets import QAItem, load_gsm8k, load_hotpotqa
from statebound.envs.qa.env import AnswerKind, QAEnvironment, grade_answer

__all__ = ["Gsm8k", "Gsm8kOptions", "HotpotQA", "HotpotOptions", "QABenchmark", "QAOptions"]

# The monitor's counts per question (mean over the episodes that ran; crashed ones have none).
_MONITOR_COLUMNS = (
    MetaColumn("violations", "Violations/q"),
    MetaColumn("corrections", "Corrections/q"),
    MetaColumn("env_calls", "Tool calls/q"),
    MetaColumn("context_overflow", "Over context", format="{:.0f}", aggregate="sum"),
)


class QABenchmark(Benchmark[Any, QAEnvironment]):
    """A QA dataset, the tools its agents may use, and how answers are graded."""

    dataset: ClassVar[Dataset]
    kind: ClassVar[AnswerKind]
    default_max_turns = None

    @cached_property
    def items(self) -> Sequence[QAItem]:
        items = self._load()
        return items[: self.options.limit] if self.options.limit is not None else items

    @abstractmethod
    def _load(self) -> Sequence[QAItem]:
        """Every question of the dataset, in order."""

    @property
    @abstractmethod
    def tools(self) -> tuple[str, ...]:
        """The tools the agents may call."""

    @cached_property
    def corpus(self) -> Corpus | None:
        return None

    def tasks(self) -> Sequence[Task]:
        return [Task(id=item.id, question=item.question, meta=_task_meta(item)) for item in self.items]

    def make_env(self, *, max_turns: int | None, **settings: Any) -> QAEnvironment:
        return QAEnvironment(items=self.items, tools=self.tools, kind=self.kind, corpus=self.corpus,
                             max_actions=max_turns, **settings)

    def reference(self, task_id: str) -> Reference | None:
        """The gold answer (what the grade compares the agent's answer with)."""
        return next((Reference(gold=item.answer, expected=item.answer) for item in self.items if item.id == task_id),
                    None)

    def grade(self, env: QAEnvironment, task: Task, trace: Trace) -> Grade:
        item = env.item
        score = grade_answer(trace.answer, item.answer, kind=self.kind)
        meta = {**score.metrics, "answer": trace.answer, "gold": item.answer}
        return Grade(reward=score.reward, success=score.success, turns=trace.usage.calls,
                     error_rate=env.failed_actions / env.actions if env.actions else 0.0, meta=meta)


class Gsm8k(QABenchmark):
    name = "gsm8k"
    summary = "1319 grade-school maths problems with a Calculator tool (GSM8K)"
    Options = Gsm8kOptions
    dataset = "gsm8k"
    kind = "number"
    # accuracy is SR % (success = the final number matches), so no separate column
    report_columns = _MONITOR_COLUMNS

    def _load(self) -> Sequence[QAItem]:
        return load_gsm8k()

    @property
    def tools(self) -> tuple[str, ...]:
        return ("Calculator",)


class HotpotQA(QABenchmark):
    name = "hotpotqa"
    summary = "HotpotQA: 100 distractor questions with Search and Lookup, or the dev split without tools"
    Options = HotpotOptions
    dataset = "hotpotqa"
    kind = "text"
    # the paper's Table 1 reports exact match; F1 is HotpotQA's second official metric (crashed = 0)
    report_columns = (
        MetaColumn("em", "EM %", scale=100, missing=0.0),
        MetaColumn("f1", "F1 %", scale=100, missing=0.0),
        *_MONITOR_COLUMNS,
    )

    def _load(self) -> Sequence[QAItem]:
        return load_hotpotqa(self.options.split)

    @property
    def tools(self) -> tuple[str, ...]:
        return ("Search", "Lookup") if self.options.with_tools else ()

    @cached_property
    def corpus(self) -> Corpus | None:
        if not self.options.with_tools:
            return None
        return load_jsonl_corpus(self.options.corpus) if self.options.corpus else hotpot_distractor_corpus()


def _task_meta(item: QAItem) -> dict[str, Any]:
    return {k: v for k, v in item.meta.items() if k in ("type", "level")}
