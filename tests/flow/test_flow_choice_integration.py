"""Pick on the real embedded model (SmolLM2-135M); over HTTP: tests/llm/test_llm_choice_http.py."""

from __future__ import annotations

import os

import pytest

from statebound.flow import ExitReason, Flow, Instruction, Pick, State, always
from statebound.llm.base import Message, Request, complete_sync
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.registry import open_model

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed"),
]
os.environ.setdefault("STATEBOUND_THREADS", "1")
CITIES = (" Paris", " Berlin", " a purple elephant")
SMOLLM2_CHAT = ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face"
                "<|im_end|>\n<|im_start|>user\n{}<|im_end|>\n<|im_start|>assistant\n")


def asking(pick: Pick, question: str) -> Flow:
    return Flow(name="ask", initial="Ask", states=[
        State("Ask", outputs=[Instruction(question), pick], transitions=[(always(), "End")]),
        State("End", final=True)])


def test_scoring_several_texts_costs_the_prompt_once_and_matches_scoring_each() -> None:
    llm = open_model("smollm2", mode="completion")
    together = complete_sync(llm, Request(prompt="The capital of France is", score=CITIES))
    alone = [complete_sync(llm, Request(prompt="The capital of France is", score=c)) for c in CITIES]
    context = alone[0].usage.prompt_tokens - len(alone[0].choices[0].logprobs or ())
    assert together.usage.prompt_tokens == context + sum(len(a.choices[0].logprobs or ()) for a in alone)
    assert together.usage.calls == 1
    for joint, single in zip(together.choices, alone):
        assert [t.token for t in joint.logprobs or ()] == [t.token for t in single.choices[0].logprobs or ()]
        for ours, theirs in zip(joint.logprobs or (), single.choices[0].logprobs or ()):
            assert ours.logprob == pytest.approx(theirs.logprob, abs=0.05)  # a reused prefix: float noise


def test_chat_messages_are_scored_after_the_models_chat_template() -> None:
    llm = open_model("smollm2")
    chat = complete_sync(llm, Request(messages=(Message("user", "Name a colour."),), score=("Blue", "Table")))
    text = complete_sync(open_model("smollm2", mode="completion"),
                         Request(prompt=SMOLLM2_CHAT.format("Name a colour."), score=("Blue", "Table")))
    for a, b in zip(chat.choices, text.choices):
        assert [t.logprob for t in a.logprobs or ()] == pytest.approx([t.logprob for t in b.logprobs or ()], abs=0.05)
    started = complete_sync(llm, Request(messages=(Message("user", "Name a colour."), Message("assistant", "My answer:")),
                                         score=" Blue"))
    direct = complete_sync(open_model("smollm2", mode="completion"),
                           Request(prompt=SMOLLM2_CHAT.format("Name a colour.") + "My answer:", score=" Blue"))
    assert started.choices[0].logprobs[0].logprob == pytest.approx(direct.choices[0].logprobs[0].logprob, abs=0.05)


async def test_the_model_picks_by_score_and_by_grammar() -> None:
    llm = open_model("smollm2")
    scored = await asking(Pick(lambda ctx: ["Paris", "Berlin", "Madrid"], name="city"),
                          "What is the capital of France? Answer with the city only.").run("geography", llm=llm)
    reply = scored.history[-1]
    assert scored.exit_reason is ExitReason.FINAL and reply.content == "Paris"
    record = reply.data["choice"]
    assert record["picked"] == 0 and record["scores"][0] == max(record["scores"])
    assert reply.usage is not None and reply.usage.calls == 1 and reply.usage.completion_tokens == 0
    generated = await asking(Pick(lambda ctx: ["Paris", "Berlin", "Madrid"], method="grammar"),
                             "What is the capital of France? Answer with the city only.").run("geography", llm=llm)
    assert generated.history[-1].content in ("Paris", "Berlin", "Madrid")
    assert generated.history[-1].usage.completion_tokens >= 1


async def test_a_candidate_longer_than_the_context_ends_the_run_like_a_full_context() -> None:
    llm = open_model("smollm2", n_ctx=64)
    result = await asking(Pick(lambda ctx: ["short", "word " * 100]), "Pick one.").run("x", llm=llm)
    assert result.exit_reason is ExitReason.CONTEXT
