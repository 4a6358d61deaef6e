"""Token streaming: flow.stream(tokens=True) and run(on_token=...) hand on each reply's pieces as
the model writes them, before the reply's own event; scoring and picks stream nothing; statebound
run prints the pieces. The embedded model: at the end."""

from __future__ import annotations

import asyncio
import os

import pytest
from typer.testing import CliRunner

from statebound import CallLLM, Flow, Instruction, Pick, State, always
from statebound.cli.app import app
from statebound.flow import TokenDelta
from statebound.llm.base import Message, Request, complete_sync
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.streaming import streaming_to
from statebound.llm.testing import ScriptedLLM


def chatty() -> Flow:
    return Flow(name="chatty", initial="Say", states=[
        State("Say", outputs=[Instruction("Say hello."), CallLLM(max_tokens=30)], transitions=[(always(), "Choose")]),
        State("Choose", outputs=[Pick(lambda ctx: ["red", "blue"], method="random")],
              transitions=[(always(), "End")]),
        State("End", final=True)])


async def _collect(flow: Flow, llm: ScriptedLLM, *, tokens: bool) -> list[object]:
    return [event async for event in flow.stream("t", llm=llm, tokens=tokens)]


def test_stream_with_tokens_yields_the_pieces_before_the_reply() -> None:
    events = asyncio.run(_collect(chatty(), ScriptedLLM(["Hello there, friend."]), tokens=True))
    kinds = [e.kind for e in events]  # type: ignore[attr-defined]
    pieces = [e for e in events if isinstance(e, TokenDelta)]
    assert [p.text for p in pieces] == ["Hello", " there,", " friend."]
    assert {p.state for p in pieces} == {"Say"}
    first, reply = kinds.index("token"), kinds.index("message_added", kinds.index("token"))
    assert kinds[first:reply] == ["token"] * 3 and events[reply].entry.content == "Hello there, friend."  # type: ignore[attr-defined]
    assert kinds.count("token") == 3  # the Pick streamed nothing


def test_without_tokens_there_are_none() -> None:
    events = asyncio.run(_collect(chatty(), ScriptedLLM(["Hello there."]), tokens=False))
    assert not any(isinstance(e, TokenDelta) for e in events)


def test_run_takes_an_on_token_callback_and_records_no_token_events() -> None:
    pieces: list[TokenDelta] = []
    result = chatty().run_sync("t", llm=ScriptedLLM(["Hi you."]), on_token=pieces.append)
    assert "".join(p.text for p in pieces) == "Hi you." and not any(e.kind == "token" for e in result.events)


def test_a_request_made_outside_a_sink_streams_nothing() -> None:
    pieces: list[str] = []
    llm = ScriptedLLM(["one two"])
    with streaming_to(pieces.append):
        pass
    complete_sync(llm, Request(messages=(Message("user", "x"),)))
    assert pieces == []


def test_statebound_run_prints_each_reply_once_with_tokens() -> None:
    replies = '["Expression: 3*12-5"]'
    result = CliRunner().invoke(app, ["run", "arithmetic", "-m", "scripted", "--model-option",
                                      f"replies={replies}", "--tokens"])
    assert result.exit_code == 0, result.output
    assert result.output.count("Expression: 3*12-5") == 1
    assert "llm: Expression: 3*12-5\n" in result.output


@pytest.mark.integration
@pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed")
def test_the_embedded_model_streams_the_reply_it_would_return() -> None:
    from statebound import open_model

    os.environ.setdefault("STATEBOUND_THREADS", "1")
    llm = open_model("smollm2")
    request = Request(messages=(Message("user", "Count from one to ten."),), max_tokens=12)
    complete_sync(llm, request)  # what the model has read is reused below: compare two calls that both reuse it
    plain = complete_sync(llm, request)
    pieces: list[str] = []
    with streaming_to(pieces.append):
        streamed = complete_sync(llm, request)
    assert len(pieces) > 1 and "".join(pieces) == streamed.text == plain.text
    assert streamed.usage.prompt_tokens == plain.usage.prompt_tokens
    assert streamed.usage.completion_tokens == plain.usage.completion_tokens
