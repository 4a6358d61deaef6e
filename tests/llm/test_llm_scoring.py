"""Scoring several texts after one prompt: the request, the test doubles' scorer, and the
OpenAI-compatible backend's echo and prompt_logprobs transports against a scripted server (what
only a server of another kind would send; llama-cpp-python's real server: test_server_scoring.py,
vLLM's: tests/servers)."""

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


def _echo(tokens: list[str], values: list[float | None], *, generated: str, top: float | None = None) -> Reply:
    """An echo reply (``/completions`` with ``echo`` and ``logprobs``): the prompt's tokens and the
    generated one, with the top alternative's value per position (the token's own by default)."""
    offsets = [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))]
    tops = [None if v is None else {t: v if top is None or i < len(tokens) - 1 else top}
            for i, (t, v) in enumerate(zip(tokens, values))]
    body = {"choices": [{"index": 0, "text": "".join(tokens), "finish_reason": "length",
                         "logprobs": {"tokens": tokens, "token_logprobs": values, "text_offset": offsets,
                                      "top_logprobs": tops}}],
            "usage": {"prompt_tokens": len(tokens) - 1, "completion_tokens": 1}}
    assert "".join(tokens).endswith(generated)
    return Reply(body=json.dumps(body).encode())


CHECKED = _echo(["The", " capital", " of", " France", " is", " Paris"], [None, -9.0, -1.0, -2.0, -1.0, -0.5],
                generated=" Paris")


def test_echo_scoring_checks_the_alignment_once_then_reads_each_texts_tokens(fault_server: Server) -> None:
    server, base_url = fault_server
    blue = _echo(["Q", ":", " sky", "?", " blue", "!"], [None, -1.0, -2.0, -0.5, -0.25, -3.0], generated="!")
    server.play(CHECKED, blue, _echo(["Q", ":", " sky", "?", " gr", "een", "."], [None, -1.0, -2.0, -0.5, -2.0, -1.0, -4.0],
                      generated="."))
    llm = open_model("openai:test-model", base_url=base_url, api_key="k", scoring="echo", attempts=1)
    assert llm.capabilities.scoring and not llm.capabilities.chat_scoring  # no chat template here
    completion = complete_sync(llm, Request(prompt="Q: sky?", score=(" blue", " green")))
    assert [[(t.token, t.logprob) for t in c.logprobs or ()] for c in completion.choices] == [
        [(" blue", -0.25)], [(" gr", -2.0), ("een", -1.0)]]  # the generated token is not the text's
    assert completion.usage.prompt_tokens == 5 + 2  # the server's count with the first text, then the second's
    check, first = server.bodies[0], server.bodies[1]
    assert check["prompt"] == "The capital of France is"
    assert (first["prompt"], first["echo"], first["logprobs"], first["max_tokens"]) == ("Q: sky? blue", True, 1, 1)
    server.play(blue)
    complete_sync(llm, Request(prompt="Q: sky?", score=" blue"))  # the check is not made again
    assert [body["prompt"] for body in server.bodies] == ["Q: sky? blue"]


def test_an_echo_that_fails_the_self_check_is_refused_naming_the_server_and_the_check(fault_server: Server) -> None:
    """llama-cpp-python 0.3.16's echo of a prompt without BOS: each row one position late, so the
    generated token falls off the end."""
    server, base_url = fault_server
    shifted = _echo(["The", " capital", " of", " France", " is"], [None, -8.0, -7.5, -9.0, -6.0], generated=" is")
    server.play(shifted)
    llm = open_model("openai:test-model", base_url=base_url, api_key="k", scoring="echo", attempts=1)
    with pytest.raises(UnsupportedFeature, match=r"127.0.0.1.*cannot score text by echo: the self-check"):
        complete_sync(llm, Request(prompt="Q: sky?", score=" blue"))
    server.play(_echo(["The", " capital", " of", " France", " is", " a"], [None, -9.0, -1.0, -2.0, -1.0, -3.0],
                      generated=" a", top=-0.5))  # the greedy token is not the best of its position
    with pytest.raises(UnsupportedFeature, match="self-check"):
        complete_sync(llm, Request(prompt="Q: sky?", score=" blue"))


def test_a_plain_openai_server_scores_nothing_unless_told(fault_server: Server) -> None:
    _, base_url = fault_server
    plain = open_model("openai:test-model", base_url=base_url, api_key="k", attempts=1)
    assert not plain.capabilities.scoring and not plain.capabilities.chat_scoring
    with pytest.raises(UnsupportedFeature, match=r"\(openai profile\) cannot score text: it has no scoring "
                                                 r"transport.*choice=label"):
        complete_sync(plain, Request(prompt="Q", score=" a"))


def _tokens(*ids: int) -> Reply:
    return Reply(body=json.dumps({"tokens": list(ids), "count": len(ids)}).encode())


def _prompt_logprobs(*rows: list[tuple[int, str, float]]) -> Reply:
    """vLLM's completion reply with ``prompt_logprobs`` per choice (its documented extension: per
    prompt position null or {token id: {logprob, rank, decoded_token}})."""
    choices = [{"index": i, "text": "x", "finish_reason": "length",
                "prompt_logprobs": [None] + [{str(t): {"logprob": lp, "rank": 1, "decoded_token": d}}
                                             for t, d, lp in row[1:]]}
               for i, row in enumerate(rows)]
    return Reply(body=json.dumps({"choices": choices, "usage": {"prompt_tokens": 9, "completion_tokens": 2}}).encode())


def test_vllm_scores_every_candidate_in_one_request_by_prompt_logprobs(fault_server: Server) -> None:
    server, base_url = fault_server
    head = [(1, "<|im_start|>", 0.0), (2, "user", -1.0), (3, "\n", -0.1), (4, "Q", -2.0)]
    server.play(_tokens(1, 2, 3, 4), _tokens(10, 11), _tokens(12),
                _prompt_logprobs([*head, (10, " bl", -1.5), (11, "ue", -0.5)], [*head, (12, " red", -2.5)]))
    llm = open_model("openai:test-model", base_url=base_url, api_key="k", profile="vllm", attempts=1)
    assert llm.capabilities.chat_scoring  # the server renders the chat with its own template
    messages = (Message("user", "Q"), Message("assistant", "My answer:"))
    completion = complete_sync(llm, Request(messages=messages, score=(" blue", " red")))
    assert [[(t.token, t.logprob) for t in c.logprobs or ()] for c in completion.choices] == [
        [(" bl", -1.5), ("ue", -0.5)], [(" red", -2.5)]]
    assert completion.usage.prompt_tokens == 4 + 3
    chat, blue, red, scored = server.bodies
    assert chat["messages"] == [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "My answer:"}]
    assert (chat["continue_final_message"], chat["add_generation_prompt"]) == (True, False)
    assert (blue["prompt"], blue["add_special_tokens"], red["prompt"]) == (" blue", False, " red")
    assert scored["prompt"] == [[1, 2, 3, 4, 10, 11], [1, 2, 3, 4, 12]] and scored["prompt_logprobs"] == 0


def test_a_vllm_reply_without_prompt_logprobs_is_named(fault_server: Server) -> None:
    server, base_url = fault_server
    plain = {"choices": [{"index": 0, "text": "x"}], "usage": {"prompt_tokens": 4, "completion_tokens": 1}}
    server.play(_tokens(1, 2), _tokens(10), Reply(body=json.dumps(plain).encode()))
    llm = open_model("openai:test-model", base_url=base_url, api_key="k", profile="vllm", attempts=1)
    with pytest.raises(UnsupportedFeature, match="returned no prompt_logprobs for the scored tokens"):
        complete_sync(llm, Request(prompt="Q", score=" a"))
