"""The OpenAI-compatible backend's raw JSON path, on both HTTP transports, against a real server."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import pytest
from llm_fault_server import OK, FaultServer, Reply, completion_body, status

from statebound.errors import DefinitionError, ProviderError
from statebound.llm.base import Request, chat, complete_sync
from statebound.llm.registry import open_model
from statebound.llm.retry import RetryPolicy

KEY = "sk-test-transport-0123456789SECRET"
Server = tuple[FaultServer, str]


@pytest.fixture(params=["aiohttp", "httpx"])
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


def model(base_url: str, transport: str, *, attempts: int = 3):
    return open_model(
        "openai:test-model", base_url=base_url, api_key=KEY, timeout=5.0, transport=transport,
        retry=RetryPolicy(attempts=attempts, initial_wait=0.01, max_wait=0.02),
    )


def body(reply: dict[str, object]) -> Reply:
    return Reply(body=json.dumps(reply).encode())


CHAT_LOGPROBS = {
    "choices": [{"index": 0, "finish_reason": "length",
                 "message": {"role": "assistant", "content": "yes sir"},
                 "logprobs": {"content": [{"token": "yes", "logprob": -0.25, "top_logprobs": []},
                                          {"token": " sir", "logprob": -1.5, "top_logprobs": []}]}}],
    "usage": {"prompt_tokens": 4, "completion_tokens": 2},
}
COMPLETION_LOGPROBS = {
    "choices": [{"index": 0, "text": " no", "finish_reason": "stop",
                 "logprobs": {"tokens": [" no", "!"], "token_logprobs": [-0.5, None]}}],
    "usage": {"prompt_tokens": 2, "completion_tokens": 1},
}


def test_chat_with_logprobs(fault_server: Server, transport: str) -> None:
    server, base_url = fault_server
    server.play(body(CHAT_LOGPROBS))
    completion = complete_sync(model(base_url, transport),
                               chat(("user", "hi"), max_tokens=2, logprobs=True, seed=7))
    choice = completion.choices[0]
    assert (choice.text, choice.finish_reason) == ("yes sir", "length")
    assert [(t.token, t.logprob) for t in choice.logprobs] == [("yes", -0.25), (" sir", -1.5)]
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (4, 2)
    sent = server.bodies[0]
    assert sent["messages"] == [{"role": "user", "content": "hi"}] and sent["seed"] == 7
    assert (sent["logprobs"], sent["top_logprobs"], sent["max_tokens"]) == (True, 1, 2)
    assert server.seen[0]["authorization"] == f"Bearer {KEY}"


def test_completion_with_logprobs_and_grammar(fault_server: Server, transport: str) -> None:
    server, base_url = fault_server
    server.play(body(COMPLETION_LOGPROBS))
    llm = open_model("openai:test-model", base_url=base_url, api_key=KEY, transport=transport,
                     grammar_field="grammar")
    request = Request(prompt="Q:", max_tokens=3, logprobs=True, grammar='root ::= " no"')
    choice = complete_sync(llm, request).choices[0]
    assert choice.text == " no"
    assert [(t.token, t.logprob) for t in choice.logprobs] == [(" no", -0.5)]  # null dropped
    sent = server.bodies[0]
    assert (sent["prompt"], sent["logprobs"], sent["grammar"]) == ("Q:", 1, 'root ::= " no"')
    assert "messages" not in sent


def test_stops_beyond_four_are_applied_locally(fault_server: Server, transport: str) -> None:
    server, base_url = fault_server
    server.play(Reply(body=completion_body("alpha beta STOP gamma")))
    request = chat(("user", "go"), stop=("1", "2", "3", "4", "STOP"))
    choice = complete_sync(model(base_url, transport), request).choices[0]
    assert (choice.text, choice.finish_reason) == ("alpha beta ", "stop")
    assert server.bodies[0]["stop"] == ["1", "2", "3", "4"]


def test_n_samples_in_one_reply(fault_server: Server, transport: str) -> None:
    server, base_url = fault_server
    server.play(Reply(body=completion_body("x", n=3)))
    completion = complete_sync(model(base_url, transport), chat(("user", "go"), n=3))
    assert [c.text for c in completion.choices] == ["x", "x", "x"]
    assert server.bodies[0]["n"] == 3 and len(server.seen) == 1


def test_429_with_retry_after_then_success(fault_server: Server, transport: str,
                                           caplog: pytest.LogCaptureFixture) -> None:
    server, base_url = fault_server
    server.play(status(429, retry_after="0.2"), OK)
    with caplog.at_level(logging.WARNING, logger="statebound.llm.retry"):
        assert complete_sync(model(base_url, transport), chat(("user", "hi"))).text == "hello"
    assert "HTTP 429" in caplog.text and "retrying in 0.20 s" in caplog.text
    assert len(server.seen) == 2


def test_server_errors_exhausted(fault_server: Server, transport: str) -> None:
    server, base_url = fault_server
    server.play(status(500), status(502), status(503))
    with pytest.raises(ProviderError, match="HTTP 503, server error") as caught:
        complete_sync(model(base_url, transport), chat(("user", "hi")))
    assert caught.value.attempts == 3 and len(server.seen) == 3


def test_body_that_is_not_json_is_retried_then_fails(fault_server: Server, transport: str) -> None:
    server, base_url = fault_server
    html = Reply(body=b"<html>gateway</html>", headers=(("Content-Type", "text/html"),))
    server.play(html, html)
    with pytest.raises(ProviderError, match="malformed response: the body is not JSON") as caught:
        complete_sync(model(base_url, transport, attempts=2), chat(("user", "hi")))
    assert "<html>gateway" in str(caught.value) and caught.value.attempts == 2


@pytest.mark.parametrize(
    "reply, message",
    [({"id": "x"}, "no choices"), ({"choices": []}, "no choices"), ([1, 2], "not a JSON object"),
     ({"choices": [42]}, "a choice is a int"), ({"choices": [{"index": 0}]}, "neither message nor text"),
     ({"choices": [{"message": "hi"}]}, "message is a str"),
     ({"choices": [{"text": 5}]}, "text is a int")],
    ids=["no-choices", "empty-choices", "list", "choice-int", "no-text", "message-str", "text-int"],
)
def test_unusable_replies_are_retried(fault_server: Server, transport: str,
                                      reply: object, message: str) -> None:
    server, base_url = fault_server
    server.play(body(reply), OK)  # type: ignore[arg-type]
    assert complete_sync(model(base_url, transport), chat(("user", "hi"))).text == "hello"
    server.play(body(reply))  # type: ignore[arg-type]
    with pytest.raises(ProviderError, match=f"malformed response: .*{message}"):
        complete_sync(model(base_url, transport, attempts=1), chat(("user", "hi")))


def test_unreadable_logprobs_are_malformed(fault_server: Server, transport: str) -> None:
    server, base_url = fault_server
    broken = {"choices": [{"message": {"content": "a"}, "logprobs": {"content": [{"token": "a"}]}}]}
    server.play(body(broken))
    with pytest.raises(ProviderError, match="unreadable logprobs"):
        complete_sync(model(base_url, transport, attempts=1), chat(("user", "hi"), logprobs=True))


def test_missing_usage_and_finish_reason_are_tolerated(fault_server: Server, transport: str) -> None:
    server, base_url = fault_server
    server.play(body({"choices": [{"message": {"content": None}}], "usage": None}))
    completion = complete_sync(model(base_url, transport), chat(("user", "hi")))
    assert (completion.text, completion.choices[0].finish_reason) == ("", "stop")
    assert (completion.usage.prompt_tokens, completion.usage.calls) == (0, 1)


def test_api_key_never_in_the_error(fault_server: Server, transport: str) -> None:
    server, base_url = fault_server
    echo = f'{{"error": {{"message": "key {KEY} refused"}}}}'
    server.play(status(401, body=echo))
    llm = model(base_url, transport)
    with pytest.raises(ProviderError) as caught:
        complete_sync(llm, chat(("user", "hi")))
    assert "key sk-test-*** refused" in str(caught.value)  # masked by value, its vendor prefix kept
    assert KEY not in str(caught.value) and KEY not in repr(llm)


def test_transport_from_environment_and_config(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    monkeypatch.setenv("STATEBOUND_HTTP_TRANSPORT", "httpx")
    assert open_model("openai:m", base_url="http://127.0.0.1:1/v1").transport == "httpx"
    assert open_model("openai:m", base_url="http://127.0.0.1:1/v1",
                      transport="aiohttp").transport == "aiohttp"  # the argument wins
    monkeypatch.delenv("STATEBOUND_HTTP_TRANSPORT")
    config = tmp_path / "config.toml"
    config.write_text('[openai]\ntransport = "curl"\n', encoding="utf-8")
    monkeypatch.setenv("STATEBOUND_CONFIG", str(config))
    with pytest.raises(DefinitionError, match='transport from config file .* "aiohttp" or "httpx"'):
        open_model("openai:m", base_url="http://127.0.0.1:1/v1")
    config.write_text("", encoding="utf-8")
    assert open_model("openai:m", base_url="http://127.0.0.1:1/v1").transport == "aiohttp"


PROBE = """
import asyncio, gc, sys
from statebound.llm import chat, open_model

llm = open_model("openai:m", base_url=sys.argv[1], api_key="k", transport=sys.argv[2])

async def main(ending):
    for _ in range(2):
        text = (await llm.complete(chat(("user", "hi")))).text
    sessions = sum(type(o).__name__ == "ClientSession" and not o.closed  # aiohttp open sessions
                   for o in gc.get_objects())
    if ending == "aclose":
        await llm.aclose()
        await llm.aclose()  # twice is harmless
    return text, sessions

print(*asyncio.run(main("aclose")), *asyncio.run(main("loop-end")))
"""


def test_no_warnings_at_exit(fault_server: Server, transport: str) -> None:
    """With aclose, or without it when asyncio.run ends the loop, nothing is left unclosed."""
    server, base_url = fault_server
    server.play(*[OK] * 4)
    result = subprocess.run(
        [sys.executable, "-W", "default", "-X", "tracemalloc", "-c", textwrap.dedent(PROBE),
         base_url, transport],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stderr
    sessions = "1" if transport == "aiohttp" else "0"  # the transport asked for is the one used
    assert result.stdout.split() == ["hello", sessions] * 2
    assert result.stderr == ""
    assert len(server.seen) == 4


async def test_a_closed_client_is_reopened(fault_server: Server, transport: str) -> None:
    server, base_url = fault_server
    server.play(OK, OK)
    llm = model(base_url, transport)
    assert (await llm.complete(chat(("user", "hi")))).text == "hello"
    await llm.aclose()
    assert (await llm.complete(chat(("user", "hi")))).text == "hello"
    await llm.aclose()


def test_a_finished_loop_is_let_go(fault_server: Server, transport: str) -> None:
    """asyncio.run closes the loop's client, and the model then holds neither it nor the loop."""
    server, base_url = fault_server
    server.play(OK)
    llm = model(base_url, transport)
    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []

    async def one() -> str:
        loops.append(weakref.ref(asyncio.get_running_loop()))
        return (await llm.complete(chat(("user", "hi")))).text

    assert asyncio.run(one()) == "hello"
    gc.collect()
    assert loops[0]() is None
