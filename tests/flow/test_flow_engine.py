"""The run loop: Algorithm 1, limits, SF_Agent isolation, history, usage, tools, errors."""

from __future__ import annotations

import asyncio
import threading

import pytest

from statebound.errors import ContextOverflow, DefinitionError
from statebound.flow import (
    Agent,
    CallLLM,
    CallTool,
    ExitReason,
    Flow,
    Instruction,
    State,
    ToolResult,
    always,
    contains,
    to_messages,
)
from statebound.llm.base import Message
from statebound.llm.testing import FunctionLLM, ScriptedLLM


async def test_run_reaches_final_state_with_full_history(retry_flow):
    llm = ScriptedLLM(["5", "4"])
    result = await retry_flow.run("What is 2+2?", llm=llm)
    assert result.exit_state == "End"
    assert result.exit_reason is ExitReason.FINAL and result.ok
    assert result.trajectory == ("Solve", "Error", "End")
    assert result.turns == 2
    assert [(e.source, e.state, e.content) for e in result.history] == [
        ("task", "Solve", "What is 2+2?"),
        ("instruction", "Solve", "SOLVE"),
        ("llm", "Solve", "5"),
        ("tool", "Solve", "Observation: 5"),
        ("instruction", "Error", "ERROR"),
        ("llm", "Error", "4"),
        ("tool", "Error", "Observation: 4"),
    ]
    assert [e.role for e in result.history] == ["user", "user", "assistant", "tool", "user", "assistant", "tool"]
    assert result.history[3].ok is False and result.history[6].ok is True
    assert result.history[3].name == "check_four"


async def test_llm_sees_history_mapped_to_chat_messages(retry_flow):
    llm = ScriptedLLM(["5", "4"])
    await retry_flow.run("Q", llm=llm)
    assert llm.requests[1].messages == (
        Message("system", "SYSTEM"),
        Message("user", "Q\n\nSOLVE"),
        Message("assistant", "5"),
        Message("user", "Observation: 5\n\nERROR"),
    )


def test_to_messages_mapping_and_agent_instruction():
    from statebound.flow import Entry

    history = [
        Entry("user", "task", "A", "task"),
        Entry("assistant", "reply", "A", "llm"),
        Entry("tool", "obs", "A", "tool", name="t", ok=True),
    ]
    assert to_messages(history, system="S", instruction="I") == (
        Message("system", "S\n\nI"),
        Message("user", "task"),
        Message("assistant", "reply"),
        Message("user", "obs"),
    )
    assert to_messages(history)[0] == Message("user", "task")


async def test_sf_agent_instruction_stays_out_of_history_and_other_prompts():
    secret = "SECRET AGENT INSTRUCTION"
    flow = Flow(
        name="agents",
        initial="Plan",
        system="SYS",
        states=[
            State("Plan", agent=Agent(secret), outputs=[CallLLM()], transitions=[(always(), "Act")]),
            State("Act", outputs=[Instruction("ACT"), CallLLM()], transitions=[(always(), "End")]),
            State("End", final=True),
        ],
    )
    llm = ScriptedLLM(["plan", "act"])
    result = await flow.run("task", llm=llm)
    assert result.ok
    plan_request, act_request = llm.requests
    assert plan_request.messages[0] == Message("system", f"SYS\n\n{secret}")
    assert all(secret not in e.content for e in result.history)
    assert all(secret not in m.content for m in act_request.messages)
    assert act_request.messages[0] == Message("system", "SYS")


async def test_states_may_use_different_models():
    main, other = ScriptedLLM(["from main"], model="main"), ScriptedLLM(["from other"], model="other")
    flow = Flow(
        name="models",
        initial="A",
        states=[
            State("A", outputs=[CallLLM()], transitions=[(always(), "B")]),
            State("B", agent=Agent("be B", llm=other), outputs=[CallLLM()], transitions=[(always(), "End")]),
            State("End", final=True),
        ],
    )
    result = await flow.run("t", llm=main)
    assert [c.model for c in result.calls] == ["main", "other"]
    assert [e.content for e in result.history if e.source == "llm"] == ["from main", "from other"]
    assert len(main.requests) == 1 and len(other.requests) == 1


async def test_turn_limit(submit_flow):
    llm = ScriptedLLM(["no"] * 10)
    result = await submit_flow.run("t", llm=llm)
    assert result.exit_reason is ExitReason.TURN_LIMIT
    assert result.turns == 5
    assert len(llm.requests) == 5  # Algorithm 1: at most max_turns states run their outputs
    assert result.exit_state == "Work"


async def test_visit_limit():
    flow = Flow(
        name="visits",
        initial="Work",
        states=[
            State("Work", outputs=[CallLLM()], transitions=[(contains("submit"), "End"), (always(), "Work")]),
            State("End", final=True),
        ],
        visit_limits={"Work": 2},
    )
    llm = ScriptedLLM(["no", "no", "no"])
    result = await flow.run("t", llm=llm)
    assert result.exit_reason is ExitReason.VISIT_LIMIT
    assert result.exit_state == "Work"  # the last state entered (its third visit was refused)
    assert len(llm.requests) == 2
    assert result.trajectory == ("Work", "Work")  # it was not entered a third time: the trajectory says so
    entered = [e for e in result.events if e.kind == "state_entered"]
    hit = [e for e in result.events if e.kind == "budget_hit"]
    assert [e.visit for e in entered] == [1, 2] and [(h.limit, h.used, h.allowed) for h in hit] == [("visits", 3, 2)]


async def test_token_budget_stops_after_the_call_that_used_it_up(submit_flow):
    # Each ScriptedLLM call: prompt "t" (1 token) + growing history; replies of 3 tokens.
    flow = submit_flow.replace(token_budget=10)
    llm = ScriptedLLM(["one two three"] * 5)
    result = await flow.run("t", llm=llm)
    assert result.exit_reason is ExitReason.BUDGET
    assert result.usage.total_tokens >= 10
    previous = result.usage.total_tokens - result.calls[-1].usage.total_tokens
    assert previous < 10  # it stopped at the first call that reached the budget
    assert result.history[-1].source == "llm"  # the reply that used it up is kept


async def test_usage_per_call_state_and_run(retry_flow):
    result = await retry_flow.run("What is 2+2?", llm=ScriptedLLM(["5", "4"]))
    assert [c.state for c in result.calls] == ["Solve", "Error"]
    assert result.usage.calls == 2
    assert result.usage == result.usage_by_state["Solve"] + result.usage_by_state["Error"]
    assert result.usage_by_state["Solve"].prompt_tokens == len(["SYSTEM", "What", "is", "2+2?", "SOLVE"])
    assert result.cost == 0.0  # the pricing table prices the scripted model at 0


async def test_cost_unknown_for_unpriced_model(submit_flow):
    result = await submit_flow.run("t", llm=ScriptedLLM(["submit"], model="mystery-model"))
    assert result.calls[0].cost is None and result.cost is None


async def test_tool_exception_ends_run_with_error_and_keeps_history():
    def broken(ctx):
        raise RuntimeError("disk on fire")

    flow = Flow(
        name="err",
        initial="A",
        states=[
            State("A", outputs=[Instruction("go"), CallTool(broken)], transitions=[(always(), "End")]),
            State("End", final=True),
        ],
    )
    result = await flow.run("t")
    assert result.exit_reason is ExitReason.ERROR
    assert isinstance(result.error, RuntimeError)
    assert [e.content for e in result.history] == ["t", "go"]


async def test_no_transition_fired_is_an_error_with_a_fix():
    flow = Flow(
        name="stuck",
        initial="A",
        states=[State("A", outputs=[CallLLM()], transitions=[(contains("x"), "End")]), State("End", final=True)],
    )
    result = await flow.run("t", llm=ScriptedLLM(["y"]))
    assert result.exit_reason is ExitReason.ERROR
    assert isinstance(result.error, DefinitionError)
    assert "always()" in str(result.error)


async def test_a_history_over_the_context_window_ends_the_run_as_a_limit():
    def small_context(request):
        if sum(len(m.content) for m in request.messages) > 30:
            raise ContextOverflow("prompt too long", provider="test")
        return "a long reply"

    flow = Flow(name="grow", initial="A", max_turns=10,
                states=[State("A", outputs=[CallLLM()], transitions=[(contains("done"), "End"), (always(), "A")]),
                        State("End", final=True)])
    result = await flow.run("task", llm=FunctionLLM(small_context))
    assert result.exit_reason is ExitReason.CONTEXT and result.error is None
    assert [e.content for e in result.history] == ["task"] + ["a long reply"] * 3  # 4 + 3 * 12 > 30
    assert result.turns == 3


async def test_missing_llm_is_reported():
    flow = Flow(name="f", initial="A", states=[State("A", outputs=[CallLLM()], transitions=[(always(), "E")]), State("E", final=True)])
    result = await flow.run("t")
    assert result.exit_reason is ExitReason.ERROR
    assert "pass llm=" in str(result.error)


async def test_sync_tools_run_in_a_thread_async_tools_are_awaited():
    seen: dict[str, object] = {}

    def sync_tool(ctx):
        seen["sync"] = threading.current_thread() is threading.main_thread()
        return "sync done"

    async def async_tool(ctx):
        await asyncio.sleep(0)
        seen["async"] = threading.current_thread() is threading.main_thread()
        return ToolResult("async done", ok=False, data={"n": 1})

    def inline_tool(ctx):
        seen["inline"] = threading.current_thread() is threading.main_thread()
        return "inline done"

    flow = Flow(
        name="tools",
        initial="A",
        states=[
            State("A", outputs=[CallTool(sync_tool), CallTool(async_tool), CallTool(inline_tool, blocking=False)],
                  transitions=[(always(), "End")]),
            State("End", final=True),
        ],
    )
    result = await flow.run("t")
    assert seen == {"sync": False, "async": True, "inline": True}
    tools = [e for e in result.history if e.source == "tool"]
    assert [(e.content, e.ok) for e in tools] == [("sync done", True), ("async done", False), ("inline done", True)]
    assert tools[1].data == {"n": 1}


async def test_tool_returning_wrong_type_is_an_error():
    flow = Flow(name="f", initial="A", states=[
        State("A", outputs=[CallTool(lambda ctx: 42, blocking=False)], transitions=[(always(), "E")]),
        State("E", final=True)])
    result = await flow.run("t")
    assert "return a str or a ToolResult" in str(result.error)


async def test_tools_read_deps_and_task():
    def tool(ctx):
        return f"{ctx.deps['env']}:{ctx.task}:{ctx.state}:{ctx.visits['A']}"

    flow = Flow(name="f", initial="A", states=[
        State("A", outputs=[CallTool(tool)], transitions=[(always(), "E")]), State("E", final=True)])
    result = await flow.run("hello", deps={"env": "db"})
    assert result.last("tool").content == "db:hello:A:1"


def test_run_sync_inside_and_outside_a_loop(submit_flow):
    assert submit_flow.run_sync("t", llm=ScriptedLLM(["submit"])).ok

    async def inside():
        return submit_flow.run_sync("t", llm=ScriptedLLM(["submit"]))

    assert asyncio.run(inside()).ok


async def test_instruction_computed_from_context():
    flow = Flow(name="f", initial="A", states=[
        State("A", outputs=[Instruction(lambda ctx: f"Task was: {ctx.task}")], transitions=[(always(), "E")]),
        State("E", final=True)])
    result = await flow.run("sum it")
    assert result.history[-1].content == "Task was: sum it"


async def test_call_llm_options_and_custom_render():
    flow = Flow(name="f", initial="A", states=[
        State("A", outputs=[CallLLM(max_tokens=2, stop=("STOP",), render=lambda ctx: [Message("user", "custom")])],
              transitions=[(always(), "E")]),
        State("E", final=True)])
    llm = ScriptedLLM(["a b STOP c"])
    result = await flow.run("t", llm=llm)
    request = llm.requests[0]
    assert request.messages == (Message("user", "custom"),)
    assert request.max_tokens == 2 and request.stop == ("STOP",)
    assert result.history[-1].content == "a b "


async def test_a_grammar_computed_for_each_call_from_the_run():
    """``CallLLM(grammar=fn)``: each call sends the grammar made from the run as it stands."""
    def one_more_than_seen(ctx) -> str:
        return f'root ::= "{len(ctx.history)}"'

    flow = Flow(name="f", initial="A", states=[
        State("A", outputs=[CallLLM(grammar=one_more_than_seen)], transitions=[(always(), "B")]),
        State("B", outputs=[CallLLM(grammar='root ::= "fixed"')], transitions=[(always(), "C")]),
        State("C", outputs=[CallLLM(grammar=lambda ctx: None)], transitions=[(always(), "E")]),
        State("E", final=True)])
    llm = ScriptedLLM(["1", "fixed", "free"])
    await flow.run("t", llm=llm)
    assert [r.grammar for r in llm.requests] == ['root ::= "1"', 'root ::= "fixed"', None]


def test_replace_rejects_unknown_settings(submit_flow):
    with pytest.raises(DefinitionError, match="unknown settings"):
        submit_flow.replace(max_turn=3)
    assert submit_flow.replace(max_turns=3).max_turns == 3


async def test_non_string_task_is_rejected(submit_flow):
    with pytest.raises(DefinitionError, match="task must be a string"):
        await submit_flow.run(123)  # type: ignore[arg-type]


async def test_events_not_recorded_when_disabled(submit_flow):
    result = await submit_flow.run("t", llm=ScriptedLLM(["submit"]), record_events=False)
    assert result.events == () and result.ok




def test_import_of_statebound_flow_stays_light():
    import subprocess
    import sys

    code = (
        "import sys, statebound.flow, statebound.flow.trace, statebound.examples.arithmetic;"
        "print([m for m in ('numpy', 'openai', 'llama_cpp', 'langgraph') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
