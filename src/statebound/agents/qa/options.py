"""The options ``statebound eval gsm8k|hotpotqa -O key=value`` take (the benchmarks', read by their
agents): the question limit, the prompt set and its shots, the decoding monitor's mode and budget,
self-consistency's samples, PASS's summary variant and length penalty, HotpotQA's split and corpus,
and the scoped agents' chooser."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from statebound.agents.qa.agents import QAAgentOptions
from statebound.agents.qa.pass_summary import SummaryName
from statebound.agents.qa.prompts import Dataset, PromptSet
from statebound.contract.benchmark import ChoiceOptions
from statebound.spec.monitor import CorrectionStyle, Mode

__all__ = ["Gsm8kOptions", "HotpotOptions", "QAOptions"]


class QAOptions(ChoiceOptions):
    limit: int | None = Field(None, ge=1, le=2**63 - 1, description="only the first N questions")
    prompts: PromptSet = Field("authors", description="the agents' prompts: the PASS authors' texts (authors) or ours (statebound)")
    shots: int | None = Field(None, ge=0, le=1_000, description="few-shot examples in the prompt (default: all of the set's; the authors' six on HotpotQA)")
    mode: Mode = Field("posthoc", description="the decoding monitor's mode (posthoc, grammar, eager, none)")
    correction: CorrectionStyle = Field("authors", description="how the monitor corrects a violation: the authors' (the first valid state's whole marker; a prefix only after input) or the paper's (valid-state prefixing at every boundary)")
    chunk_tokens: int = Field(128, ge=1, le=1_000_000, description="tokens the monitor generates at a time")
    max_calls: int = Field(10, ge=1, le=100_000, description="model calls per run before the monitor wraps up")
    k: int = Field(5, ge=1, le=1_000, description="self-consistency samples")
    sample_temperature: float = Field(0.7, ge=0, le=100, description="self-consistency sampling temperature")
    summary: SummaryName = Field("authors", description="PASS's summary step: the authors' code (authors) or our reading of the paper (statebound)")
    alpha: float | None = Field(None, description="PASS's length penalty (default: the summary variant's, 0.3 authors, 0.6 statebound)")

    def agent_options(self, dataset: Dataset) -> QAAgentOptions:
        return QAAgentOptions(dataset=dataset, shots=self.shots, prompts=self.prompts, mode=self.mode,
                              correction=self.correction, chunk_tokens=self.chunk_tokens, max_calls=self.max_calls, k=self.k,
                              sample_temperature=self.sample_temperature, summary=self.summary, alpha=self.alpha)


class Gsm8kOptions(QAOptions):
    pass


class HotpotOptions(QAOptions):
    split: Literal["distractor", "dev"] = Field("distractor", description="distractor (100, with tools) or dev (7405, no tools)")
    corpus: str | None = Field(None, description="a JSONL corpus for Search and Lookup")

    @property
    def with_tools(self) -> bool:
        return self.split == "distractor" or self.corpus is not None
