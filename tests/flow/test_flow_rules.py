"""Transition rules, LLM-decided transitions (strict parsing, fallback) and choose()."""

from __future__ import annotations

import pytest

from statebound.errors import DefinitionError
from statebound.flow import (
    CallLLM,
    CallTool,
    Flow,
    State,
    ToolResult,
    TransitionTaken,
    always,
    choose,
    contains,
    llm_choice,
    matches,
    parse_choice,
    repeated,
    tool_failed,
    tool_ok,
)
from statebound.llm.testing import ScriptedLLM


def _router(*transitions, reply="hello", tool=None):
    outputs = [CallLLM()] + ([CallTool(tool, blocking=False)] if tool else [])
    return Flow(
        name="router",
        initial="A",
        states=[
            State("A", outputs=outputs, transitions=list(transitions)),
            State("B", final=True, description="the B state"),
            State("C", final=True, description="the C state"),
        ],
    ), ScriptedLLM([reply, "extra", "extra"])


@pytest.mark.parametrize(
    ("rule", "reply", "expected"),
    [
        (contains("Error"), "Error: bad", "B"),
        (contains("Error"), "all good", "C"),
        (contains("error", ignore_case=True), "ERROR here", "B"),
        (contains("x", "submit"), "Action: submit", "B"),
        (matches(r"execute\[(DESC|DESCRIBE) "), "Action: execute[DESC t]", "B"),
        (matches(r"^SELECT"), "  SELECT 1", "C"),
        (~contains("Error"), "fine", "B"),
        (contains("a") & contains("b"), "a only", "C"),
        (contains("a") | contains("b"), "b only", "B"),
        (lambda ctx: len(ctx.history) == 2, "plain function", "B"),
    ],
)
async def test_rules_over_the_latest_entry(rule, reply, expected):
    flow, llm = _router((rule, "B"), (always(), "C"), reply=reply)
    assert (await flow.run("task", llm=llm)).exit_state == expected


async def test_source_filter_looks_at_latest_entry_of_that_source():
    flow, llm = _router((contains("submit", source="llm"), "B"), (always(), "C"),
                        reply="submit", tool=lambda ctx: "Observation: done")
    assert (await flow.run("t", llm=llm)).exit_state == "B"
    flow, llm = _router((contains("submit"), "B"), (always(), "C"),
                        reply="submit", tool=lambda ctx: "Observation: done")
    assert (await flow.run("t", llm=llm)).exit_state == "C"


@pytest.mark.parametrize(("ok", "expected"), [(True, "B"), (False, "C")])
async def test_tool_ok_and_failed(ok, expected):
    flow, llm = _router((tool_ok(), "B"), (tool_failed(), "C"), tool=lambda ctx: ToolResult("out", ok=ok))
    assert (await flow.run("t", llm=llm)).exit_state == expected


async def test_tool_status_only_counts_this_state_visit():
    flow = Flow(
        name="visit",
        initial="A",
        states=[
            State("A", outputs=[CallTool(lambda ctx: ToolResult("bad", ok=False), blocking=False)],
                  transitions=[(always(), "B")]),
            State("B", outputs=[CallLLM()], transitions=[(tool_failed(), "Err"), (always(), "End")]),
            State("Err", final=True),
            State("End", final=True),
        ],
    )
    assert (await flow.run("t", llm=ScriptedLLM(["x"]))).exit_state == "End"


def test_bad_regex_is_a_definition_error():
    with pytest.raises(DefinitionError, match="not a valid regular expression"):
        matches("(")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Verify", "Verify"),
        ("  verify.\n", "Verify"),
        ('"End"', "End"),
        ("**End**", "End"),
        ("Next state: End", "End"),
        ("End\nbecause it is done", "End"),
        ("I think End", None),
        ("Verify or End", None),
        ("Ending", None),
        ("", None),
    ],
)
def test_parse_choice_is_strict(text, expected):
    assert parse_choice(text, ["Verify", "End"]) == expected


async def test_llm_choice_picks_an_allowed_state():
    flow, llm = _router(llm_choice(["B", "C"], fallback="B", question="Done yet?"), reply="first")
    llm = ScriptedLLM(["first", "C"])
    result = await flow.run("t", llm=llm)
    assert result.exit_state == "C"
    prompt = llm.requests[1].messages[-1].content
    assert "Done yet?" in prompt and "- B: the B state" in prompt and "- C: the C state" in prompt
    assert [c.kind for c in result.calls] == ["llm", "choice"]
    assert result.usage_by_state["A"].calls == 2
    taken = [e for e in result.events if isinstance(e, TransitionTaken)]
    assert taken[0].reason == "LLM chose C"


async def test_llm_choice_falls_back_when_answer_names_no_allowed_state():
    flow, _ = _router(llm_choice(["B", "C"], fallback="B"))
    llm = ScriptedLLM(["first", "maybe D?"])
    result = await flow.run("t", llm=llm)
    assert result.exit_state == "B"
    taken = [e for e in result.events if isinstance(e, TransitionTaken)][0]
    assert "names no allowed state" in taken.reason and "fallback to B" in taken.reason
    # the choice is not part of the history
    assert [e.content for e in result.history] == ["t", "first"]


async def test_llm_choice_may_use_its_own_model():
    judge = ScriptedLLM(["C"], model="judge")
    flow, llm = _router(llm_choice(["B", "C"], fallback="B", llm=judge))
    result = await flow.run("t", llm=llm)
    assert result.exit_state == "C" and len(judge.requests) == 1
    assert [c.model for c in result.calls] == ["scripted", "judge"]


async def test_choose_names_a_declared_target_or_falls_through():
    def route(ctx):
        return "C" if "c" in ctx.last.content else None

    flow, llm = _router(choose(route, targets=["C"]), (always(), "B"), reply="c please")
    assert (await flow.run("t", llm=llm)).exit_state == "C"
    flow, llm = _router(choose(route, targets=["C"]), (always(), "B"), reply="nothing")
    assert (await flow.run("t", llm=llm)).exit_state == "B"


async def test_choose_returning_an_undeclared_target_is_an_error():
    flow, llm = _router(choose(lambda ctx: "B", targets=["C"]), (always(), "B"))
    result = await flow.run("t", llm=llm)
    assert isinstance(result.error, DefinitionError) and "declared" in str(result.error)


def _loop(rule, replies):
    flow = Flow(
        name="loop",
        initial="A",
        states=[
            State("A", outputs=[CallLLM()], transitions=[(rule, "Stuck"), (always(), "A")]),
            State("Stuck", final=True),
        ],
        max_turns=10,
    )
    return flow.run_sync("task", llm=ScriptedLLM(replies))


@pytest.mark.parametrize(
    ("times", "replies", "turns_in_a"),
    [
        (2, ["x", "y", "y \n"], 3),  # the second y repeats the first (whitespace aside)
        (2, ["x", "y", "x", "x"], 4),  # only consecutive replies count
        (3, ["y", "y", "x", "y", "y", "y"], 6),
    ],
)
def test_repeated_fires_when_the_latest_replies_are_the_same(times, replies, turns_in_a):
    result = _loop(repeated(times), replies)
    assert result.exit_state == "Stuck"
    assert result.trajectory == ("A",) * turns_in_a + ("Stuck",)


def test_repeated_needs_as_many_entries_as_it_counts():
    result = _loop(repeated(3), ["x", "x", "y", "y", "z", "z", "v", "v", "w", "w"])
    assert set(result.trajectory) == {"A"}  # never three in a row: the turn limit ends it
    assert result.exit_reason.value == "turn_limit"


def test_repeated_looks_only_at_its_source():
    replies = iter(["a", "b"])
    flow = Flow(
        name="loop",
        initial="A",
        states=[
            State("A", outputs=[CallLLM(), CallTool(lambda ctx: next(replies, "same"), blocking=False)],
                  transitions=[(repeated(2, source="tool"), "Stuck"), (always(), "A")]),
            State("Stuck", final=True),
        ],
        max_turns=10,
    )
    result = flow.run_sync("task", llm=ScriptedLLM(["1", "2", "3", "4"]))
    assert result.trajectory == ("A", "A", "A", "A", "Stuck")  # tool said a, b, same, same


def test_repeated_rejects_fewer_than_two():
    with pytest.raises(DefinitionError, match="times >= 2"):
        repeated(1)
