"""Scoring several texts after one prompt: the request, the test doubles' scorer, and the
OpenAI-compatible backend's prompt log-probabilities (echo), against a scripted server."""

from __future__ import annotations

import json
import math

import pytest
from llm_fault_server import FaultServer, Reply

from statebound.errors import UnsupportedFeature
from statebound.llm.base import Message, Request, complete_sync
from statebound.llm.registry import open_model
from statebound.llm.scoring import text_score
from statebound.llm.testing import FunctionLLM, ScriptedLLM

Server = tuple[FaultServer, str]


def test_a_request_scores_one_text_or_a_tuple_after_a_prompt_or_messages() -> None:
    assert Request(prompt="p", score="x").scored_texts == ("x",)
    assert Request(prompt="p", score=("x", "y")).scored_texts == ("x", "y")
    assert Request(messages=(Message("user", "q"),), score=("x",)).scored_texts == ("x",)
    assert Request(prompt="p").scored_texts == ()
    with pytest.raises(ValueError, match="non-empty tuple"):
        Request(prompt="p", score=("x", 3))  # type: ignore[arg-type]


def test_a_scorer_answers_scoring_requests_without_using_the_script() -> None:
    llm = ScriptedLLM(["a reply"], scorer=lambda context, text: [-len(text)] * len(text.split()))
    assert llm.capabilities.scoring
    completion = complete_sync(llm, Request(prompt="pick one:", score=("red", "dark blue")))
    assert [c.text for c in completion.choices] == ["red", "dark blue"]
    assert [[t.logprob for t in c.logprobs or ()] for c in completion.choices] == [[-3], [-9, -9]]
    # the prompt (two words) once, then each text's words: 2 + 1 + 2
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (5, 0)
    assert llm.remaining == 1 and complete_sync(llm, Request(prompt="go")).text == "a reply"


def test_a_scorer_sees_chat_messages_as_text_and_must_give_one_value_per_word() -> None:
    seen: list[str] = []
    llm = FunctionLLM(lambda r: "unused", scorer=lambda context, text: seen.append(context) or [-1.0])
    complete_sync(llm, Request(messages=(Message("user", "which?"),), score=("one",)))
    assert seen == ["which?"]
    with pytest.raises(ValueError, match="one per word"):
        complete_sync(llm, Request(prompt="p", score=("two words",)))


def test_text_score_normalizations() -> None:
    assert text_score([-1.0, -3.0]) == -2.0
    assert text_score([-1.0, -3.0], normalization="sum") == -4.0
    assert text_score([-1.0, -3.0], normalization="gnmt") == pytest.approx(-4.0 / ((7 / 6) ** 0.6))
    assert text_score([]) == -math.inf
    with pytest.raises(ValueError, match="unknown normalization"):
        text_score([-1.0], normalization="max")  # type: ignore[arg-type]


def _echo(prompt: str, tokens: list[str], values: list[float | None]) -> Reply:
    offsets = [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))]
    text = "".join(tokens)
    assert text.startswith(prompt)
    body = {"choices": [{"index": 0, "text": text, "finish_reason": "length",
                         "logprobs": {"tokens": tokens, "token_logprobs": values, "text_offset": offsets}}],
            "usage": {"prompt_tokens": len(tokens) - 1, "completion_tokens": 1}}
    return Reply(body=json.dumps(body).encode())


def test_an_openai_server_scores_by_echoing_the_prompt(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(_echo("Q: sky?", ["Q", ":", " sky", "?", " blue", "!"], [None, -1.0, -2.0, -0.5, -0.25, -3.0]),
                _echo("Q: sky?", ["Q", ":", " sky", "?", " gr", "een", "."], [None, -1.0, -2.0, -0.5, -2.0, -1.0, -4.0]))
    llm = open_model("openai:test-model", base_url=base_url, api_key="k", scoring=True, attempts=1)
    assert llm.capabilities.scoring
    completion = complete_sync(llm, Request(prompt="Q: sky?", score=(" blue", " green")))
    assert [[(t.token, t.logprob) for t in c.logprobs or ()] for c in completion.choices] == [
        [(" blue", -0.25)], [(" gr", -2.0), ("een", -1.0)]]  # the generated token is not the text's
    assert completion.usage.prompt_tokens == 5 + 6  # what the server counted, per request
    first = server.bodies[0]
    assert (first["prompt"], first["echo"], first["logprobs"], first["max_tokens"]) == ("Q: sky? blue", True, 1, 1)


def test_a_server_that_echoes_no_prompt_logprobs_is_unsupported(fault_server: Server) -> None:
    server, base_url = fault_server
    generated_only = {"choices": [{"index": 0, "text": "!", "finish_reason": "length",
                                   "logprobs": {"tokens": ["!"], "token_logprobs": [-3.0]}}],
                      "usage": {"prompt_tokens": 4, "completion_tokens": 1}}
    server.play(Reply(body=json.dumps(generated_only).encode()))
    llm = open_model("openai:test-model", base_url=base_url, api_key="k", scoring=True, attempts=1)
    with pytest.raises(UnsupportedFeature, match=r"llama.cpp's own server.*method='grammar'"):
        complete_sync(llm, Request(prompt="Q: sky?", score=" blue"))


def test_an_openai_server_scores_only_when_told(fault_server: Server) -> None:
    _, base_url = fault_server
    plain = open_model("openai:test-model", base_url=base_url, api_key="k", attempts=1)
    assert not plain.capabilities.scoring and not plain.capabilities.chat_scoring
    with pytest.raises(UnsupportedFeature, match="scoring=True"):
        complete_sync(plain, Request(prompt="Q", score=" a"))


def _vllm_chat(tokens: list[tuple[str, float]]) -> Reply:
    """vLLM's chat reply with ``prompt_logprobs`` (its documented extension: per prompt position
    null or {token id: {logprob, rank, decoded_token}})."""
    entries = [None] + [{str(100 + i): {"logprob": lp, "rank": 1, "decoded_token": t}}
                        for i, (t, lp) in enumerate(tokens[1:])]
    body = {"object": "chat.completion", "choices": [{"index": 0, "finish_reason": "length",
                                                      "message": {"role": "assistant", "content": "x"}}],
            "usage": {"prompt_tokens": len(tokens), "completion_tokens": 1}, "prompt_logprobs": entries}
    return Reply(body=json.dumps(body).encode())


def test_chat_messages_are_scored_through_vllms_chat_template_and_prompt_logprobs(fault_server: Server) -> None:
    server, base_url = fault_server
    head = [("<|im_start|>", 0.0), ("user", -1.0), ("\n", -0.1), ("Q", -2.0), ("<|im_end|>", -0.2),
            ("<|im_start|>", -0.1), ("assistant", -0.1), ("\n", -0.1)]
    server.play(_vllm_chat([*head, ("My", -0.3), (" answer", -0.4), (":", -0.2), (" bl", -1.5), ("ue", -0.5)]),
                _vllm_chat([*head, ("My", -0.3), (" answer", -0.4), (":", -0.2), (" red", -2.5)]))
    llm = open_model("openai:test-model", base_url=base_url, api_key="k", scoring=True, attempts=1)
    assert llm.capabilities.chat_scoring
    messages = (Message("user", "Q"), Message("assistant", "My answer:"))
    completion = complete_sync(llm, Request(messages=messages, score=(" blue", " red")))
    assert [[(t.token, t.logprob) for t in c.logprobs or ()] for c in completion.choices] == [
        [(" bl", -1.5), ("ue", -0.5)], [(" red", -2.5)]]
    body = server.bodies[0]
    assert body["messages"] == [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "My answer: blue"}]
    assert (body["continue_final_message"], body["add_generation_prompt"], body["prompt_logprobs"]) == (True, False, 0)


def test_a_chat_server_without_prompt_logprobs_is_unsupported_and_names_the_choosers(fault_server: Server) -> None:
    server, base_url = fault_server
    plain_chat = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "x"}}],
                  "usage": {"prompt_tokens": 4, "completion_tokens": 1}}
    server.play(Reply(body=json.dumps(plain_chat).encode()))
    llm = open_model("openai:test-model", base_url=base_url, api_key="k", scoring=True, attempts=1)
    with pytest.raises(UnsupportedFeature, match="vLLM does.*choice=label or choice=grammar"):
        complete_sync(llm, Request(messages=(Message("user", "Q"),), score=" a"))
