"""CallLLM(tools=[...]): the model's calls run as tools, recorded in the history; a bad call is a
failed tool result the model sees; rules branch on what was called. The real model: at the end."""

from __future__ import annotations

import os

import pytest

from statebound import CallLLM, Flow, Instruction, RunContext, State, ToolResult, always, called
from statebound.errors import DefinitionError, UnsupportedFeature
from statebound.flow import ExitReason
from statebound.flow.tool_calls import FunctionTool
from statebound.llm.base import Capabilities, Choice, Request, ToolCall
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.testing import ScriptedLLM

TOOLS_CAPABLE = Capabilities(chat=True, tools=True)


def order_status(order_id: int) -> str:
    """Look up where an order is.

    Longer text the model does not need."""
    return f"Order {order_id} shipped yesterday."


def refund(ctx: RunContext, order_id: int, reason: str = "not given") -> ToolResult:
    """Refund an order."""
    return ToolResult(f"Refund of {order_id} started ({reason}) in state {ctx.state}", data={"refunded": order_id})


def support(call: CallLLM) -> Flow:
    return Flow(name="support", initial="Act", max_turns=3, states=[
        State("Act", outputs=[Instruction("Customer: where is order 1234?"), call],
              transitions=[(called("order_status"), "Status"), (called(), "Other"), (always(), "End")]),
        State("Status", transitions=[(always(), "End")]),
        State("Other", transitions=[(always(), "End")]),
        State("End", final=True)])


def calling(*calls: ToolCall, text: str = "") -> ScriptedLLM:
    return ScriptedLLM([Choice(text=text, tool_calls=calls)], capabilities=TOOLS_CAPABLE)


def test_a_function_is_described_by_its_signature_and_docstring() -> None:
    spec = FunctionTool(refund).spec
    assert spec.name == "refund" and spec.description == "Refund an order."
    assert spec.parameters["required"] == ["order_id"]
    assert spec.parameters["properties"]["order_id"]["type"] == "integer"
    assert "ctx" not in spec.parameters["properties"]
    assert FunctionTool(order_status).spec.description == "Look up where an order is."


def test_the_call_runs_is_recorded_and_the_rule_branches_on_it() -> None:
    llm = calling(ToolCall("c1", "order_status", '{"order_id": 1234}'))
    result = support(CallLLM(tools=[order_status, refund])).run_sync("t", llm=llm)
    assert result.trajectory == ("Act", "Status", "End")
    reply, tool = result.history[-2:]
    assert reply.content == 'order_status({"order_id": 1234})'
    assert reply.data == {"tool_calls": [{"id": "c1", "name": "order_status", "arguments": '{"order_id": 1234}'}]}
    assert (tool.source, tool.name, tool.ok, tool.content) == ("tool", "order_status", True,
                                                             "Order 1234 shipped yesterday.")
    sent = llm.requests[0]
    assert [t.name for t in sent.tools] == ["order_status", "refund"] and sent.tool_choice == "auto"


def test_a_tool_taking_ctx_gets_the_run_and_returns_a_tool_result() -> None:
    result = support(CallLLM(tools=[order_status, refund])).run_sync(
        "t", llm=calling(ToolCall("c1", "refund", '{"order_id": 7}')))
    assert result.trajectory == ("Act", "Other", "End")
    assert result.history[-1].content == "Refund of 7 started (not given) in state Act"
    assert result.history[-1].data["data"] == {"refunded": 7}


@pytest.mark.parametrize(("call", "said"), [
    (ToolCall("c1", "cancel", "{}"), "Error: there is no function 'cancel'; call one of order_status, refund"),
    (ToolCall("c1", "order_status", '{"order_id": "soon"}'),
     "does not fit its parameters: order_id: Input should be a valid integer"),
    (ToolCall("c1", "order_status", "{}"), "does not fit its parameters: order_id: Field required"),
    (ToolCall("c1", "order_status", '{"order_id": 12'), "does not fit its parameters: arguments: Invalid JSON"),
])
def test_a_bad_call_is_a_failed_tool_result_the_model_sees(call: ToolCall, said: str) -> None:
    result = support(CallLLM(tools=[order_status, refund])).run_sync("t", llm=calling(call))
    assert result.exit_reason is ExitReason.FINAL
    failed = result.history[-1]
    assert failed.ok is False and said in failed.content


def test_a_reply_without_a_call_is_an_ordinary_reply() -> None:
    llm = ScriptedLLM(["I cannot help."], capabilities=TOOLS_CAPABLE)
    result = support(CallLLM(tools=[order_status])).run_sync("t", llm=llm)
    assert result.trajectory == ("Act", "End") and result.history[-1].content == "I cannot help."


def test_definition_mistakes_are_refused_when_the_flow_is_built() -> None:
    def order_status_again(order_id: int) -> str:
        return ""

    order_status_again.__name__ = "order_status"
    with pytest.raises(DefinitionError, match="two tools are named 'order_status'"):
        CallLLM(tools=[order_status, order_status_again])
    with pytest.raises(DefinitionError, match="tool_choice is 'auto', 'required' or an offered function's name"):
        CallLLM(tools=[order_status], tool_choice="refund")
    with pytest.raises(DefinitionError, match=r"\*args cannot be described"):
        CallLLM(tools=[lambda *args: ""])
    with pytest.raises(ValueError, match="takes no grammar=, schema= or score="):
        Request(prompt="x", tools=(FunctionTool(order_status).spec,), grammar='root ::= "a"')


def test_a_model_without_tools_is_refused_before_the_run() -> None:
    llm = ScriptedLLM(["x"])
    with pytest.raises(UnsupportedFeature, match="state 'Act' offers the model tools, and scripted takes none"):
        support(CallLLM(tools=[order_status])).run_sync("t", llm=llm)
    assert llm.requests == []


@pytest.mark.integration
@pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed")
def test_the_embedded_model_calls_under_a_grammar() -> None:
    from statebound import open_model

    os.environ.setdefault("STATEBOUND_THREADS", "1")
    result = support(CallLLM(tools=[order_status, refund], tool_choice="required", max_tokens=60)).run_sync(
        "t", llm=open_model("smollm2"))
    calls = result.history[-2].data["tool_calls"]
    assert len(calls) == 1 and calls[0]["name"] in ("order_status", "refund")
    assert result.history[-1].source == "tool" and result.history[-1].ok is True
    assert result.trajectory[1] == ("Status" if calls[0]["name"] == "order_status" else "Other")


def test_the_next_call_sees_the_calls_and_their_results_as_the_providers_messages() -> None:
    from statebound.llm.base import flatten_tool_messages

    flow = Flow(name="two", initial="Act", states=[
        State("Act", outputs=[Instruction("Where is order 1234?"), CallLLM(tools=[order_status])],
              transitions=[(always(), "Reply")]),
        State("Reply", outputs=[CallLLM()], transitions=[(always(), "End")]),
        State("End", final=True)])
    llm = ScriptedLLM([Choice(text="", tool_calls=(ToolCall("c1", "order_status", '{"order_id": 1234}'),)),
                       "It shipped yesterday."], capabilities=TOOLS_CAPABLE)
    flow.run_sync("t", llm=llm)
    *_, asked, answered = llm.requests[1].messages or ()
    assert asked.role == "assistant" and asked.tool_calls == (ToolCall("c1", "order_status", '{"order_id": 1234}'),)
    assert (answered.role, answered.tool_call_id, answered.content) == ("tool", "c1", "Order 1234 shipped yesterday.")
    flat = flatten_tool_messages(llm.requests[1].messages or ())
    assert [m.role for m in flat] == ["user", "assistant", "user"] and not any(m.tool_calls for m in flat)
    assert flat[-1].content == "Order 1234 shipped yesterday."
