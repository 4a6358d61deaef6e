"""The QA pieces on the real embedded model (SmolLM2-135M): few calls, small budgets."""

from __future__ import annotations

from dataclasses import replace

import pytest

from statebound.agents.qa.summary_choice import normalized_score, score_continuation
from statebound.bench.evaluate import run_task
from statebound.bench.registry import load_benchmark
from statebound.llm.base import LLM, Capabilities, Completion, LLMWrapper, Request
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.registry import open_model

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed"),
]


class _WithoutScoring(LLMWrapper):
    """The embedded model as a backend that can only force a text through its sampler."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner

    def wrapped(self) -> LLM:
        return self.inner

    @property
    def capabilities(self) -> Capabilities:
        return replace(self.inner.capabilities, scoring=False)

    async def complete(self, request: Request) -> Completion:
        assert request.score is None
        return await self.inner.complete(request)


async def test_scoring_and_forced_decoding_agree_on_a_given_text():
    llm = open_model("smollm2", mode="completion")
    context = "Question: What is the capital of France?\nAnswer:"
    likely = await score_continuation(llm, context, " The capital of France is Paris.")
    unlikely = await score_continuation(llm, context, " Purple elephants sing loudly.")
    assert likely.logprobs and unlikely.logprobs
    assert all(lp <= 0 for lp in likely.logprobs + unlikely.logprobs)
    assert likely.usage.completion_tokens == 0 and likely.usage.prompt_tokens > len(likely.logprobs)
    assert normalized_score(likely.logprobs) > normalized_score(unlikely.logprobs)
    forced = await score_continuation(_WithoutScoring(llm), context, " The capital of France is Paris.")
    assert forced.usage.completion_tokens == len(forced.logprobs)  # one decoding step per token
    assert forced.logprobs == pytest.approx(likely.logprobs, abs=0.25)  # batch vs one by one


@pytest.mark.parametrize(("benchmark", "agent"), [("gsm8k", "direct"), ("hotpotqa", "cot")])
async def test_one_episode_conforms_to_its_spec(benchmark, agent):
    bench = load_benchmark(benchmark, {"limit": 1, "shots": 1, "k": 1, "chunk_tokens": 48, "max_calls": 3})
    result = await run_task(bench, agent, bench.benchmark.tasks()[0].id, llm=open_model("smollm2"))
    assert result.meta["nonconforming"] == 0 and result.meta["incomplete"] == 0  # the monitor's guarantee
    assert result.meta["answer"]  # the [Answer] state was reached and has text
    assert 1 <= result.llm_calls <= 3 and result.completion_tokens > 0
    assert {"em", "f1", "violations", "corrections"} <= set(result.meta)


async def test_a_hybrid_after_its_agents_is_replayed_from_the_cache_on_the_real_model(tmp_path):
    """The monitor's requests are deterministic end to end: `cot->react` repeats `cot` and `react`."""
    bench = load_benchmark("gsm8k", {"limit": 1, "shots": 1, "k": 2, "chunk_tokens": 32, "max_calls": 3})
    llm = open_model("smollm2", cache=str(tmp_path / "cache.sqlite"))
    task = bench.benchmark.tasks()[0].id
    made = 0
    for agent in ("cot", "react"):
        made += (await run_task(bench, agent, task, llm=llm)).llm_calls
    assert llm.misses == made and llm.hits == 0
    hybrid = await run_task(bench, "cot->react", task, llm=llm)
    assert llm.misses == made  # nothing new was computed: every call of the hybrid was a replay
    assert llm.hits == hybrid.llm_calls > 0
