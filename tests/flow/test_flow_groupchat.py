"""Group-chat roles and speaker selection: a role, "auto" (LLM, with fallback) and None."""

from __future__ import annotations

import pytest

from statebound.errors import DefinitionError
from statebound.examples.research import build_flow
from statebound.flow import (
    AUTO,
    Agent,
    CallLLM,
    CallTool,
    ExitReason,
    Flow,
    GroupChat,
    Instruction,
    Role,
    SpeakerSelected,
    State,
    always,
)
from statebound.llm.testing import ScriptedLLM


def _chat_flow(select, roles, **chat):
    return Flow(name="chat", initial="Chat", states=[
        State("Chat", outputs=[GroupChat(roles, select_speaker=select, **chat)], transitions=[(always(), "End")]),
        State("End", final=True)])


def _roles():
    return [
        Role("writer", CallLLM(), agent=Agent("WRITER SECRET"), description="writes"),
        Role("checker", CallTool(lambda ctx: "checked", blocking=False), description="checks"),
    ]


async def test_selection_by_role_object_and_name_then_none_ends_chat():
    writer, checker = _roles()
    order = iter([writer, "checker", None])
    seen_last = []

    def select(last, ctx):
        seen_last.append(last)
        return next(order)

    llm = ScriptedLLM(["draft"])
    result = await _chat_flow(select, [writer, checker]).run("t", llm=llm)
    assert result.exit_state == "End" and result.ok
    assert seen_last == [None, writer, checker]
    assert [(e.name, e.content) for e in result.history[1:]] == [("writer", "draft"), ("checker", "checked")]
    assert "WRITER SECRET" in llm.requests[0].messages[0].content
    assert all("WRITER SECRET" not in e.content for e in result.history)
    picks = [(e.role, e.how) for e in result.events if isinstance(e, SpeakerSelected)]
    assert picks == [("writer", "function"), ("checker", "function")]


async def test_auto_asks_the_llm_and_parses_the_role():
    writer, checker = _roles()
    calls = iter([AUTO, None])
    llm = ScriptedLLM(["checker"])
    result = await _chat_flow(lambda last, ctx: next(calls), [writer, checker]).run("t", llm=llm)
    assert result.history[-1].name == "checker"
    system, *_, prompt = llm.requests[0].messages
    # AutoGen 0.2's select_speaker_message_template and select_speaker_prompt_template, word for word
    assert (system.role, system.content) == ("system", "You are in a role play game. The following roles are available:\n"
                                             "                writer: writes\nchecker: checks.\n"
                                             "                Read the following conversation.\n"
                                             "                Then select the next role from ['writer', 'checker'] to play."
                                             " Only return the role.")
    assert (prompt.role, prompt.content) == ("user", "Read the above conversation. Then select the next role from "
                                             "['writer', 'checker'] to play. Only return the role.")
    assert [c.kind for c in result.calls] == ["speaker"]
    assert [e.how for e in result.events if isinstance(e, SpeakerSelected)] == ["auto"]


async def test_auto_prompt_statebound_keeps_our_question():
    writer, checker = _roles()
    calls = iter([AUTO, None])
    llm = ScriptedLLM(["checker"])
    await _chat_flow(lambda last, ctx: next(calls), [writer, checker], auto_prompt="statebound").run("t", llm=llm)
    prompt = llm.requests[0].messages[-1].content
    assert prompt.startswith("Who should speak next?") and "- writer: writes" in prompt and "- checker: checks" in prompt


async def test_auto_falls_back_to_next_role_in_order():
    writer, checker = _roles()
    calls = iter([writer, AUTO, None])
    llm = ScriptedLLM(["draft", "nobody"])
    result = await _chat_flow(lambda last, ctx: next(calls), [writer, checker]).run("t", llm=llm)
    assert [e.name for e in result.history[1:]] == ["writer", "checker"]
    assert [e.how for e in result.events if isinstance(e, SpeakerSelected)] == ["function", "fallback"]


async def test_max_rounds_stops_the_run():
    writer, checker = _roles()
    result = await _chat_flow(lambda last, ctx: checker, [writer, checker], max_rounds=3).run("t")
    assert result.exit_reason is ExitReason.TURN_LIMIT
    assert len([e for e in result.history if e.name == "checker"]) == 3


async def test_unknown_role_is_an_error():
    result = await _chat_flow(lambda last, ctx: "nobody", _roles()).run("t")
    assert isinstance(result.error, DefinitionError) and "not a role" in str(result.error)


def test_group_chat_definition_errors():
    with pytest.raises(DefinitionError, match="unique"):
        GroupChat([*_roles(), _roles()[0]], select_speaker=lambda last, ctx: None)
    with pytest.raises(DefinitionError, match="no outputs"):
        Role("empty")
    with pytest.raises(DefinitionError, match="may not be called 'auto'"):
        GroupChat([Role("auto", Instruction("x"))], select_speaker=lambda last, ctx: None)


async def test_blog_research_example_with_a_failing_then_passing_executor():
    ran = []

    def fake_runner(code):
        ran.append(code)
        return (1, "Traceback: boom") if len(ran) == 1 else (0, "Title: Paper A")

    flow = build_flow(fake_runner)
    llm = ScriptedLLM(["```python\nfetch()\n```", "```python\nfetch(fixed=True)\n```", "| Domain | Title |"])
    result = await flow.run("Topic: LLM papers", llm=llm)
    assert result.ok and result.exit_state == "End"
    assert ran == ["fetch()\n", "fetch(fixed=True)\n"]
    speakers = [e.role for e in result.events if isinstance(e, SpeakerSelected)]
    assert speakers == ["initializer", "coder", "executor", "coder", "executor", "scientist"]
    assert result.history[-1].content == "| Domain | Title |"
    assert "You are the Scientist" in llm.requests[-1].messages[0].content
    assert "You are the Coder" not in llm.requests[-1].messages[0].content
    assert all("You are the" not in e.content for e in result.history)


async def test_research_example_default_executor_runs_nothing():
    llm = ScriptedLLM(["```python\nimport os; os.remove('x')\n```", "table"])
    result = await build_flow().run("t", llm=llm)
    assert result.ok
    assert "dry run" in [e for e in result.history if e.name == "executor"][0].content
