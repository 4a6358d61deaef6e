"""The OpenAI-compatible backend against a real, scripted, misbehaving HTTP server on loopback."""

from __future__ import annotations

import json
import logging
import pickle
import traceback

import pytest
from llm_fault_server import (
    DROP,
    EMPTY,
    MALFORMED,
    OK,
    FaultServer,
    Reply,
    completion_body,
    slow,
    status,
)

from statebound.errors import ContextOverflow, ProviderError, UnsupportedFeature
from statebound.llm.base import Request, chat, complete_sync
from statebound.llm.registry import open_model
from statebound.llm.retry import RetryPolicy

KEY = "sk-test-0123456789abcdefSECRET"
FAST = RetryPolicy(attempts=3, initial_wait=0.01, max_wait=0.02)
Server = tuple[FaultServer, str]


def model(base_url: str, *, attempts: int = 3, timeout: float = 5.0, **options: object):
    return open_model(
        "openai:test-model", base_url=base_url, api_key=KEY, timeout=timeout,
        retry=RetryPolicy(attempts=attempts, initial_wait=0.01, max_wait=0.02), **options,
    )


def ask(llm, **options: object):
    return complete_sync(llm, chat(("user", "hi"), max_tokens=5, **options))


@pytest.mark.parametrize(
    "fault",
    [status(429), status(500), status(503), DROP, EMPTY, MALFORMED, Reply(body=b'{"id": "x"}'),
     Reply(body=b"<html>oops</html>", headers=(("Content-Type", "text/html"),))],
    ids=["429", "500", "503", "dropped", "empty", "malformed-json", "no-choices", "html"],
)
def test_each_fault_is_retried_then_succeeds(fault_server: Server, fault: Reply) -> None:
    server, base_url = fault_server
    server.play(fault, OK)
    completion = ask(model(base_url))
    assert completion.text == "hello"
    assert completion.usage.prompt_tokens == 3 and completion.usage.calls == 1
    assert len(server.seen) == 2  # one failure, one retry


def test_slow_reply_times_out_and_is_retried(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(slow(4.0), OK)  # a 1 s timeout leaves a busy machine time for the good reply
    assert ask(model(base_url, timeout=1.0)).text == "hello"


def test_persistent_faults_end_in_provider_error(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(status(500), DROP, MALFORMED)
    with pytest.raises(ProviderError) as caught:
        ask(model(base_url, attempts=3))
    assert caught.value.attempts == 3
    assert "malformed response" in str(caught.value)  # the last fault is the one reported
    assert len(server.seen) == 3


def test_timeout_exhaustion_says_timeout(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(slow(1.0), slow(1.0))
    with pytest.raises(ProviderError, match="timeout"):
        ask(model(base_url, attempts=2, timeout=0.2))


@pytest.mark.parametrize("code, hint", [(400, "request rejected"), (401, "API key"), (404, "model name")])
def test_client_errors_are_not_retried(fault_server: Server, code: int, hint: str) -> None:
    server, base_url = fault_server
    server.play(status(code), OK)
    with pytest.raises(ProviderError, match=hint) as caught:
        ask(model(base_url))
    assert caught.value.attempts == 1 and len(server.seen) == 1


@pytest.mark.parametrize("message", [
    "This model's maximum context length is 2048 tokens. However, you requested 3000 tokens.",  # vLLM
    "Requested tokens (3000) exceed context window of 2048",  # llama-cpp-python's server
    "the request exceeds the available context size, try increasing it",  # llama.cpp's server
])
def test_a_prompt_too_long_for_the_context_is_a_context_overflow(fault_server: Server, message: str) -> None:
    server, base_url = fault_server
    server.play(status(400, body=json.dumps({"error": {"message": message}})), OK)
    with pytest.raises(ContextOverflow, match="HTTP 400") as caught:
        ask(model(base_url))
    assert caught.value.attempts == 1 and len(server.seen) == 1  # not retried: it would not fit again


def test_other_rejections_are_not_context_overflows(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(status(400, body='{"error": {"message": "unknown field: temperatur"}}'))
    with pytest.raises(ProviderError) as caught:
        ask(model(base_url))
    assert not isinstance(caught.value, ContextOverflow)


def test_retry_after_is_honoured(fault_server: Server, caplog: pytest.LogCaptureFixture) -> None:
    server, base_url = fault_server
    server.play(status(429, retry_after="0.3"), OK)
    with caplog.at_level(logging.WARNING, logger="statebound.llm.retry"):
        assert ask(model(base_url)).text == "hello"
    assert "retrying in 0.30 s" in caplog.text
    assert "429" in caplog.text


def test_sdk_retries_are_off_and_key_is_sent(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(status(500))
    with pytest.raises(ProviderError):
        ask(model(base_url, attempts=1))
    assert len(server.seen) == 1  # the SDK did not retry behind our back
    assert server.seen[0]["authorization"] == f"Bearer {KEY}"


def test_key_never_leaks(fault_server: Server, caplog: pytest.LogCaptureFixture) -> None:
    server, base_url = fault_server
    echo = f'{{"error": {{"message": "bad key {KEY}, prefix {KEY[:12]}"}}}}'
    server.play(status(500, body=echo), status(401, body=echo))
    llm = model(base_url)
    with caplog.at_level(logging.DEBUG), pytest.raises(ProviderError) as caught:
        ask(llm)
    error = caught.value
    shown = [
        str(error), repr(error), "".join(traceback.format_exception(error)), caplog.text,
        repr(llm), str(llm), repr(llm.settings),
    ]
    assert "bad key sk-test-***" in str(error)  # the server's message is kept, the key masked (its vendor prefix kept)
    secret = KEY.removeprefix("sk-test-")
    fragments = [secret[i:i + 8] for i in range(len(secret) - 7)]  # any 8 characters of it identify the key
    for text in shown:
        assert KEY not in text and not any(fragment in text for fragment in fragments)
    assert error.__cause__ is None and error.__suppress_context__
    with pytest.raises(TypeError):
        pickle.dumps(llm.settings)


def test_n_samples_are_collected_from_servers_without_n(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(OK, Reply(body=completion_body("again")))
    completion = ask(model(base_url), n=2)
    assert [c.text for c in completion.choices] == ["hello", "again"]
    assert completion.usage.calls == 2 and completion.usage.prompt_tokens == 6


def test_completions_endpoint_and_client_side_stops(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(Reply(body=completion_body("one two five three", chat=False)))
    llm = model(base_url)
    request = Request(prompt="count:", max_tokens=5, stop=("a", "b", "c", "d", "five"))
    choice = complete_sync(llm, request).choices[0]
    assert choice.text == "one two " and choice.finish_reason == "stop"


def test_grammar_needs_a_grammar_field(fault_server: Server) -> None:
    _, base_url = fault_server
    with pytest.raises(UnsupportedFeature, match="grammar_field"):
        complete_sync(model(base_url), Request(prompt="x", grammar='root ::= "a"'))


def test_openai_chat_models_refuse_plain_prompts() -> None:
    llm = open_model("openai:gpt-4o-mini", api_key=KEY)
    assert not llm.capabilities.completion
    with pytest.raises(UnsupportedFeature, match="completions"):
        complete_sync(llm, Request(prompt="x"))


def test_fault_server_stops_by_itself() -> None:
    server = FaultServer(lifetime=0.2)
    server.start()
    server._thread.join(timeout=5)
    assert not server._thread.is_alive()
    server.stop()


def test_request_options_reach_the_server(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(OK, Reply(body=completion_body(chat=False)))
    llm = model(base_url)
    ask(llm, logprobs=True, seed=3, temperature=0.5, stop=("1", "2", "3", "4", "5"))
    complete_sync(llm, Request(prompt="go", max_tokens=7, logprobs=True))
    chat_body, completion_body_ = server.bodies
    assert chat_body["model"] == "test-model" and chat_body["max_tokens"] == 5
    assert chat_body["messages"] == [{"role": "user", "content": "hi"}]
    assert chat_body["stop"] == ["1", "2", "3", "4"]  # the fifth is applied client-side
    assert (chat_body["logprobs"], chat_body["top_logprobs"]) == (True, 1)
    assert (chat_body["seed"], chat_body["temperature"]) == (3, 0.5)
    assert "n" not in chat_body
    assert completion_body_["prompt"] == "go" and completion_body_["logprobs"] == 1
    assert completion_body_["max_tokens"] == 7


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_a_server_that_drips_its_reply_is_stopped_at_the_whole_request_deadline(fault_server: Server,
                                                                                 transport: str) -> None:
    """Each byte comes well within the read timeout; the reply as a whole does not."""
    import time

    from statebound.errors import ProviderTimeout

    server, base_url = fault_server
    server.play(Reply(body=OK.body, drip=0.2))  # ~200 bytes: 40 s in all
    llm = open_model("openai:test-model", base_url=base_url, api_key="k", attempts=1, timeout=1.0, transport=transport)
    started = time.monotonic()
    with pytest.raises(ProviderTimeout, match=r"no reply from 127\.0\.0\.1:\d+ within 1 s \(timeout, the whole reply counted\)"):
        complete_sync(llm, chat(("user", "hi")))
    assert time.monotonic() - started < 10
