"""One batch per pick and prefix reuse on the real embedded SmolLM2, against one-at-a-time scoring."""

from __future__ import annotations

import pytest

from statebound.errors import ContextOverflow
from statebound.llm.base import Message, Request, complete_sync
from statebound.llm.llamacpp import LlamaCppLLM, LlamaOptions, _load
from statebound.llm.model_files import llama_cpp_missing

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed"),
]
CANDIDATES = ("singer", "concert_name", "SELECT name FROM singer WHERE age > 30", " stadium.capacity", "x",
              "average age of all singers")


def _question(number: int, blind: bool = False) -> tuple[Message, ...]:
    question = "N/A" if blind else f"What is the average age of singers from country {number}?"
    return (Message("system", "You pick SQL parts."),
            Message("user", f"Table singer has columns: singer_id, name, country, age\nQuestion: {question}\nColumn:"))


def _llm(sharing: bool, n_ctx: int = 2048, flash_attn: bool = False) -> LlamaCppLLM:
    from statebound.llm.model_files import smollm2_path

    return LlamaCppLLM(smollm2_path(), model="smollm2",
                       options=LlamaOptions(n_ctx=n_ctx, sharing=sharing, flash_attn=flash_attn))


def _logprobs(llm: LlamaCppLLM, prompt: str | tuple[Message, ...], candidates: tuple[str, ...]) -> list[list[float]]:
    request = Request(prompt=prompt, score=candidates) if isinstance(prompt, str) else Request(
        messages=prompt, score=candidates)
    completion = complete_sync(llm, request)
    return [[t.logprob for t in choice.logprobs or ()] for choice in completion.choices]


def _fresh_logprobs(prompt: tuple[Message, ...], flash_attn: bool) -> list[list[float]]:
    """One-at-a-time scoring on a model that has read nothing before."""
    apart = _llm(sharing=False, flash_attn=flash_attn)
    _load(apart.path, apart.options, False).llama.reset()
    return _logprobs(apart, prompt, CANDIDATES)


@pytest.mark.parametrize("flash_attn", [False, True], ids=["default attention", "flash attention"])
def test_scores_are_those_of_a_fresh_model_scoring_one_at_a_time_bit_for_bit(flash_attn: bool) -> None:
    # prompts and blind baselines in turn, a generation between: each request reuses what another
    # left (sequence 0 or a snapshot), in cells laid out as a fresh model's; a layout that differs
    # moves the scores by tenths of a nat on this Q4 model (rounding, amplified), so they must be
    # equal, not close
    shared = _llm(sharing=True, flash_attn=flash_attn)
    requests = [_question(1), _question(1, blind=True), _question(2), _question(1, blind=True), _question(1)]
    for step, prompt in enumerate(requests):
        if step == 3:
            complete_sync(shared, Request(messages=_question(3), max_tokens=3, temperature=0.0))
        assert _logprobs(shared, prompt, CANDIDATES) == _fresh_logprobs(prompt, flash_attn)


def test_generation_after_scoring_is_that_of_a_fresh_model() -> None:
    shared, apart = _llm(sharing=True), _llm(sharing=False)
    prompt = Request(messages=_question(30), max_tokens=12, temperature=0.0, logprobs=False)
    complete_sync(shared, Request(messages=_question(31), score=CANDIDATES))
    complete_sync(shared, Request(messages=_question(30, blind=True), score=CANDIDATES))
    _load(apart.path, apart.options, False).llama.reset()
    assert complete_sync(shared, prompt).text == complete_sync(apart, prompt).text


def test_a_snapshot_gives_back_only_cells_evaluated_as_a_prompt() -> None:
    # a reply's cells come from one-token batches (other kernels): scoring the prompt followed by
    # the reply, once the model has read something else, evaluates the reply again, as a fresh model
    shared = _llm(sharing=True, n_ctx=2048)
    question = _question(50)
    reply = complete_sync(shared, Request(messages=question, max_tokens=6, temperature=0.0)).text
    complete_sync(shared, Request(messages=_question(50, blind=True), score=CANDIDATES))
    answered = (*question, Message("assistant", reply))
    assert _logprobs(shared, answered, CANDIDATES) == _fresh_logprobs(answered, flash_attn=False)


def test_usage_counts_the_prompt_once_and_the_tokens_reused() -> None:
    llm = _llm(sharing=True)
    first = complete_sync(llm, Request(messages=_question(10), score=CANDIDATES)).usage
    blind = complete_sync(llm, Request(messages=_question(10, blind=True), score=CANDIDATES)).usage
    again = complete_sync(llm, Request(messages=_question(10), score=CANDIDATES)).usage
    texts = sum(len(c) for c in _logprobs(llm, _question(11), CANDIDATES))
    assert first.prompt_tokens == again.prompt_tokens > blind.prompt_tokens > texts
    assert blind.cached_tokens >= 25  # the baseline shares the prompt's system message and schema
    # the prompt again after its baseline: all but its last two tokens (evaluated again for the
    # last one's logits, in a batch of two), kept aside while the baseline was read
    assert again.cached_tokens == first.prompt_tokens - texts - 2


def test_generation_counts_the_prompt_tokens_it_reuses() -> None:
    llm = _llm(sharing=True)
    prompt = _question(20)
    complete_sync(llm, Request(messages=_question(20, blind=True), score=CANDIDATES))  # a kept sequence
    first = complete_sync(llm, Request(messages=prompt, max_tokens=2, temperature=0.0))
    again = complete_sync(llm, Request(messages=prompt, max_tokens=2, temperature=0.0))
    assert 0 < first.usage.cached_tokens < again.usage.cached_tokens == again.usage.prompt_tokens - 1
    assert again.text == first.text


def test_a_batch_out_of_cells_is_scored_in_smaller_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    from statebound.llm import llama_batch

    groups: list[tuple[int, bool]] = []  # each group's size, and whether it fit the KV cache
    evaluate_group = llama_batch._evaluate_group

    def recorded(llama: object, cache: object, prefix: int, texts: list[list[int]]) -> list[list[float]]:
        try:
            scores = evaluate_group(llama, cache, prefix, texts)  # type: ignore[arg-type]
        except RuntimeError:
            groups.append((len(texts), False))
            raise
        groups.append((len(texts), True))
        return scores

    monkeypatch.setattr(llama_batch, "_evaluate_group", recorded)
    # 226 prompt tokens in 256 cells; a batch of five 10-token candidates needs 226 + 45 cells
    # (candidates go in batches with flash attention only)
    small, apart = _llm(sharing=True, n_ctx=256, flash_attn=True), _llm(sharing=False, n_ctx=256, flash_attn=True)
    prompt = "word " * 225
    candidates = tuple(f" SELECT name FROM singer WHERE age > {n}" for n in range(10, 22))
    ours = _logprobs(small, prompt, candidates)
    theirs = _logprobs(apart, prompt, candidates)
    assert (5, False) in groups and (3, True) in groups
    assert [len(t) for t in ours] == [len(t) for t in theirs] == [10] * 12
    assert ours == theirs
    engine = _load(small.path, small.options, False)
    assert engine.llama.n_tokens == 226  # the prompt stays for the next request


def test_a_candidate_that_cannot_fit_even_alone_is_a_context_overflow() -> None:
    llm = _llm(sharing=True, n_ctx=128)
    with pytest.raises(ContextOverflow, match="n_ctx"):
        complete_sync(llm, Request(messages=_question(40), score=("ok", " word" * 120)))
