"""The request and reply fields of structured output, tool calls and streaming that only other
servers send, against a scripted server replaying replies written from their documentation:
OpenAI's ``response_format: json_schema``, ``tools`` and ``tool_calls`` (arguments as a JSON
string; Ollama's as an object), and a stream whose last event carries the usage
(``stream_options.include_usage``)."""

from __future__ import annotations

import json
import warnings

import pytest
from llm_fault_server import FaultServer, Reply

from statebound.errors import ProviderError
from statebound.llm.base import Message, Request, ToolSpec, complete_sync
from statebound.llm.registry import open_model
from statebound.llm.streaming import streaming_to

Server = tuple[FaultServer, str]
ROUTE = {"type": "object", "properties": {"team": {"enum": ["billing", "tech"]}}, "required": ["team"]}
STATUS = ToolSpec("order_status", "Look up an order.", {"type": "object", "properties": {"order_id": {"type": "integer"}},
                                                        "required": ["order_id"]})
ASK = (Message("user", "Where is order 1234?"),)


def _chat(message: dict[str, object], finish: str = "stop") -> Reply:
    body = {"id": "c", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5}}
    return Reply(body=json.dumps(body).encode())


def test_a_schema_is_sent_as_openais_json_schema_response_format(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(_chat({"content": '{"team": "tech"}'}))
    llm = open_model("openai:m", base_url=base_url, api_key="k", attempts=1)
    assert complete_sync(llm, Request(messages=ASK, schema=ROUTE)).text == '{"team": "tech"}'
    assert server.bodies[0]["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "reply", "schema": ROUTE, "strict": True}}


@pytest.mark.parametrize("arguments", ['{"order_id": 1234}', {"order_id": 1234}])  # OpenAI; Ollama
def test_tools_go_out_as_functions_and_tool_calls_come_back(fault_server: Server, arguments: object) -> None:
    server, base_url = fault_server
    server.play(_chat({"content": None, "tool_calls": [
        {"id": "call_abc", "type": "function", "function": {"name": "order_status", "arguments": arguments}}]},
        finish="tool_calls"))
    llm = open_model("openai:m", base_url=base_url, api_key="k", attempts=1)
    completion = complete_sync(llm, Request(messages=ASK, tools=(STATUS,), tool_choice="required"))
    (call,) = completion.choices[0].tool_calls
    assert (call.id, call.name, json.loads(call.arguments)) == ("call_abc", "order_status", {"order_id": 1234})
    body = server.bodies[0]
    assert body["tools"] == [{"type": "function", "function": {"name": "order_status", "description": "Look up an order.",
                                                               "parameters": dict(STATUS.parameters)}}]
    assert body["tool_choice"] == "required"


def test_a_named_tool_choice_is_openais_function_object(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(_chat({"content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "order_status", "arguments": "{}"}}]}))
    llm = open_model("openai:m", base_url=base_url, api_key="k", attempts=1)
    complete_sync(llm, Request(messages=ASK, tools=(STATUS,), tool_choice="order_status"))
    assert server.bodies[0]["tool_choice"] == {"type": "function", "function": {"name": "order_status"}}


def test_unreadable_tool_calls_are_a_malformed_reply(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(_chat({"content": None, "tool_calls": {"not": "a list"}}))
    llm = open_model("openai:m", base_url=base_url, api_key="k", attempts=1)
    with pytest.raises(ProviderError, match="malformed response: tool_calls is a dict, not a list"):
        complete_sync(llm, Request(messages=ASK, tools=(STATUS,)))


def _sse(*events: dict[str, object]) -> Reply:
    body = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
    return Reply(body=body.encode(), headers=(("Content-Type", "text/event-stream"),))


def test_a_stream_with_usage_in_its_last_event(fault_server: Server) -> None:
    server, base_url = fault_server
    pieces = [{"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]} for text in ("Hel", "lo", "!")]
    server.play(_sse({"choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]}, *pieces,
                     {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                     {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3}}))
    llm = open_model("openai:m", base_url=base_url, api_key="k", attempts=1)
    got: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a stream with usage is not named as one without
        with streaming_to(got.append):
            completion = complete_sync(llm, Request(messages=ASK))
    assert got == ["Hel", "lo", "!"] and completion.text == "Hello!" and completion.finish_reason == "stop"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (12, 3)
    assert server.bodies[0]["stream"] is True and server.bodies[0]["stream_options"] == {"include_usage": True}


def test_tool_calls_and_results_go_back_in_openais_fields(fault_server: Server) -> None:
    from statebound.llm.base import ToolCall

    server, base_url = fault_server
    server.play(_chat({"content": "It shipped."}), _chat({"content": "It shipped."}))
    history = (*ASK, Message("assistant", "", tool_calls=(ToolCall("call_1", "order_status", '{"order_id": 1}'),)),
               Message("tool", "Shipped yesterday.", tool_call_id="call_1"))
    native = open_model("openai:m", base_url=base_url, api_key="k", attempts=1)
    complete_sync(native, Request(messages=history, tools=(STATUS,)))
    assert server.bodies[0]["messages"][1:] == [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "order_status", "arguments": '{"order_id": 1}'}}]},
        {"role": "tool", "content": "Shipped yesterday.", "tool_call_id": "call_1"}]
    as_text = open_model("openai:m", base_url=base_url, api_key="k", attempts=1, tool_calls="grammar",
                         grammar_field="grammar")
    complete_sync(as_text, Request(messages=history))
    assert [m["role"] for m in server.bodies[1]["messages"]] == ["user", "assistant", "user"]
