"""Structured output, tool calls and token streaming over HTTP, against llama-cpp-python's real
OpenAI-compatible server on the bundled SmolLM2 (the ``llama_server`` fixture), on both HTTP
transports; and how the server's gaps are named."""

from __future__ import annotations

import warnings
from typing import Literal

import pytest
from pydantic import BaseModel

from statebound import CallLLM, Flow, Instruction, State, always, called
from statebound.errors import UnsupportedFeature
from statebound.flow import ExitReason, TokenDelta
from statebound.llm.base import Request, chat, complete_sync
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.registry import open_model
from statebound.llm.streaming import streaming_to

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed"),
]


class Route(BaseModel):
    team: Literal["billing", "tech", "sales"]
    urgent: bool


def order_status(order_id: int) -> str:
    """Look up where an order is."""
    return f"Order {order_id} shipped yesterday."


def refund(order_id: int, reason: str) -> str:
    """Refund an order."""
    return f"Refund of order {order_id} started."


def support(call: CallLLM) -> Flow:
    return Flow(name="support", initial="Act", states=[
        State("Act", outputs=[Instruction("Customer: where is my order 1234? I was charged twice."), call],
              transitions=[(called("order_status"), "Status"), (always(), "End")]),
        State("Status", transitions=[(always(), "End")]),
        State("End", final=True)])


def test_a_reply_in_a_schema_by_response_format_json_object(llama_server: str) -> None:
    llm = open_model("openai:local", base_url=llama_server, response_format="json_object")
    result = support(CallLLM(schema=Route, max_tokens=40)).run_sync("t", llm=llm)
    assert result.exit_reason is ExitReason.FINAL and result.usage.calls == 1
    assert Route.model_validate(result.history[-1].data["structured"])


def test_a_server_that_refuses_json_schema_is_named_without_retrying(llama_server: str) -> None:
    llm = open_model("openai:local", base_url=llama_server, response_format="json_schema")  # not its profile's
    with pytest.raises(UnsupportedFeature, match="does not take response_format 'json_schema'.*json_object"):
        complete_sync(llm, chat(("user", "route it"), schema=Route.model_json_schema(), max_tokens=20))


def test_a_native_tool_call_when_tool_choice_names_the_function(llama_server: str) -> None:
    llm = open_model("openai:local", base_url=llama_server, tool_calls="native")
    result = support(CallLLM(tools=[order_status, refund], tool_choice="order_status", max_tokens=60)).run_sync(
        "t", llm=llm)
    assert result.trajectory == ("Act", "Status", "End")
    assert result.history[-1].content.startswith("Order ") and result.history[-1].ok


def test_a_server_that_ignores_tools_is_named(llama_server: str) -> None:
    llm = open_model("openai:local", base_url=llama_server, tool_calls="native")
    result = support(CallLLM(tools=[order_status, refund], tool_choice="required", max_tokens=60)).run_sync(
        "t", llm=llm)
    assert isinstance(result.error, UnsupportedFeature)
    assert "the server ignores tools; use --model-option tool_calls=grammar" in str(result.error)


def test_tool_calls_by_grammar_over_the_server(llama_server: str) -> None:
    llm = open_model("openai:local", base_url=llama_server, tool_calls="grammar", grammar_field="grammar")
    result = support(CallLLM(tools=[order_status, refund], tool_choice="required", max_tokens=60)).run_sync(
        "t", llm=llm)
    call = result.history[-2].data["tool_calls"][0]
    assert call["name"] in ("order_status", "refund") and result.history[-1].ok


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
@pytest.mark.parametrize("request_", [chat(("user", "Say hello in five words."), max_tokens=16),
                                      Request(prompt="The capital of France is", max_tokens=8)])
def test_a_streamed_reply_is_the_unstreamed_one_in_pieces(llama_server: str, transport: str, request_: Request) -> None:
    llm = open_model("openai:local", base_url=llama_server, transport=transport)
    complete_sync(llm, request_)  # the server reuses what it read last: compare two calls that both reuse it
    plain = complete_sync(llm, request_)
    pieces: list[str] = []
    with warnings.catch_warnings(), streaming_to(pieces.append):
        warnings.simplefilter("error")  # the server sends no usage with a stream: counted, not warned about
        streamed = complete_sync(llm, request_)
    assert len(pieces) > 1 and "".join(pieces) == streamed.text
    assert streamed.text == plain.text and streamed.finish_reason == plain.finish_reason
    assert streamed.usage == plain.usage  # the prompt counted with the server's tokenize endpoint


async def test_flow_stream_yields_tokens_from_the_server(llama_server: str) -> None:
    llm = open_model("openai:local", base_url=llama_server)
    flow = Flow(name="hello", initial="Say", states=[
        State("Say", outputs=[Instruction("Say hello in five words."), CallLLM(max_tokens=16)],
              transitions=[(always(), "End")]),
        State("End", final=True)])
    kinds, pieces = [], []
    async for event in flow.stream("t", llm=llm, tokens=True):
        kinds.append(event.kind)
        if isinstance(event, TokenDelta):
            pieces.append(event.text)
    reply = kinds.index("message_added", kinds.index("token"))
    assert kinds[-1] == "run_finished" and all(k == "token" for k in kinds[kinds.index("token"):reply])
    assert event.result.history[-1].content == "".join(pieces)  # type: ignore[union-attr]


def test_a_grammar_pick_by_a_json_schema_enum_through_response_format(llama_server: str) -> None:
    from statebound import Pick

    llm = open_model("openai:local", base_url=llama_server, response_format="json_object", top_logprobs=0,
                     grammar_field=None, tool_calls="native", scoring=False)  # no grammar field: the schema enum
    flow = Flow(name="ask", initial="Ask", states=[
        State("Ask", outputs=[Instruction("Which city is the capital of France?"),
                              Pick(lambda ctx: ["Paris", "Berlin", "Rome"], method="grammar")],
              transitions=[(always(), "End")]),
        State("End", final=True)])
    result = flow.run_sync("t", llm=llm)
    choice = result.history[-1].data["choice"]
    assert result.exit_reason is ExitReason.FINAL and choice["method"] == "grammar"
    assert choice["candidates"] == ["Paris", "Berlin", "Rome"] and result.history[-1].content == \
        choice["candidates"][choice["picked"]]


def test_a_native_call_and_its_result_go_back_to_the_server_for_the_next_reply(llama_server: str) -> None:
    llm = open_model("openai:local", base_url=llama_server, tool_calls="native")
    flow = Flow(name="two", initial="Act", states=[
        State("Act", outputs=[Instruction("Where is my order 1234?"),
                              CallLLM(tools=[order_status], tool_choice="order_status", max_tokens=60)],
              transitions=[(always(), "Reply")]),
        State("Reply", outputs=[CallLLM(max_tokens=20)], transitions=[(always(), "End")]),
        State("End", final=True)])
    result = flow.run_sync("t", llm=llm)
    assert result.exit_reason is ExitReason.FINAL, result.error
    assert [e.source for e in result.history[-3:]] == ["llm", "tool", "llm"] and result.history[-1].content
