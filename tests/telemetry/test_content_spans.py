"""Traces with content, opt-in: prompts and replies on LLM spans, arguments and results on tool
spans, a choice's texts and scores on its scoring call, secrets masked by value; off by default."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from statebound import CallLLM, Flow, Instruction, Pick, State, always, telemetry
from statebound.llm.base import Capabilities, Choice, ToolCall
from statebound.llm.testing import ScriptedLLM

KEY = "sk-test-0123456789abcdef"


def order_status(order_id: int) -> str:
    """Look up where an order is."""
    return f"Order {order_id} shipped; the key {KEY} was used"


FLOW = Flow(name="support", initial="Act", states=[
    State("Act", outputs=[Instruction(f"Where is order 1234? My key is {KEY}."),
                          CallLLM(tools=[order_status], tool_choice="order_status")],
          transitions=[(always(), "Pick")]),
    State("Pick", outputs=[Pick(lambda ctx: ["yes", "no"], prompt="Shipped?", method="score")],
          transitions=[(always(), "End")]),
    State("End", final=True)])


def scripted() -> ScriptedLLM:
    call = Choice("", tool_calls=(ToolCall("c1", "order_status", '{"order_id": 1234}'),))
    return ScriptedLLM([call], capabilities=Capabilities(completion=True, chat=True, tools=True),
                       scorer=lambda context, text: [-1.0 if text == "yes" else -2.0])


@pytest.fixture(params=["option", "variable"])
def content_spans(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    if request.param == "variable":
        monkeypatch.setenv(telemetry.CONTENT_VARIABLE, "true")
        telemetry.enable(provider, secrets=(KEY,))
    else:
        telemetry.enable(provider, content=True, secrets=(KEY,))
    try:
        yield exporter
    finally:
        telemetry.disable()


def test_content_is_on_the_spans_with_secrets_masked(content_spans: InMemorySpanExporter) -> None:
    FLOW.run_sync("t", llm=scripted())
    spans = {span.name: span for span in content_spans.get_finished_spans()}
    chat = [s for s in content_spans.get_finished_spans() if s.name == "chat scripted"][0]
    asked = json.loads(chat.attributes["gen_ai.input.messages"])
    assert any("Where is order 1234?" in part["content"] for m in asked for part in m["parts"])
    assert KEY not in chat.attributes["gen_ai.input.messages"] and "***" in chat.attributes["input.value"]
    answered = json.loads(chat.attributes["gen_ai.output.messages"])
    assert answered[0]["parts"][1] == {"type": "tool_call", "name": "order_status", "arguments": '{"order_id": 1234}'}
    tool = spans["execute_tool order_status"]
    assert tool.attributes["gen_ai.tool.call.arguments"] == '{"order_id": 1234}'
    result = tool.attributes["gen_ai.tool.call.result"]
    assert result.startswith("Order 1234 shipped; the key ") and KEY not in result and "***" in result
    scoring = spans["text_completion scripted"]
    assert json.loads(scoring.attributes["output.value"]) == [{"text": "yes", "logprobs": [-1.0]},
                                                              {"text": "no", "logprobs": [-2.0]}]
    assert spans["choose choice"].attributes["statebound.choice.scores"] == (-1.0, -2.0)


def test_without_content_no_prompt_reply_or_result_is_on_any_span(spans: InMemorySpanExporter) -> None:
    FLOW.run_sync("t", llm=scripted())
    for span in spans.get_finished_spans():
        held = " ".join(str(value) for value in (span.attributes or {}).values())
        assert "1234" not in held and "gen_ai.input.messages" not in (span.attributes or {})
