"""The blog's speaker-selection methods beyond ``auto`` (manual, random, round_robin) and the
transition graph as a checked constraint."""

from __future__ import annotations

import pytest

from statebound.errors import DefinitionError
from statebound.flow import (
    AUTO,
    MANUAL,
    RANDOM,
    ROUND_ROBIN,
    CallTool,
    Flow,
    GroupChat,
    Role,
    SpeakerSelected,
    State,
    always,
)
from statebound.llm.testing import ScriptedLLM


def _roles(*names: str) -> list[Role]:
    return [Role(name, CallTool(lambda ctx, n=name: f"{n} spoke", blocking=False), description=f"the {name}")
            for name in names]


def _flow(select, roles, **chat):
    return Flow(name="chat", initial="Chat", states=[
        State("Chat", outputs=[GroupChat(roles, select_speaker=select, **chat)], transitions=[(always(), "End")]),
        State("End", final=True)])


def _for_rounds(method, rounds):
    """A selection function that asks ``method`` for ``rounds`` rounds, then ends the chat."""
    def select(last, ctx):
        spoken = sum(1 for e in ctx.history if e.name is not None)
        return method if spoken < rounds else None
    return select


def _speakers(result):
    return [(e.role, e.how) for e in result.events if isinstance(e, SpeakerSelected)]


async def test_round_robin_takes_the_roles_in_order_and_wraps():
    result = await _flow(_for_rounds(ROUND_ROBIN, 4), _roles("a", "b", "c")).run("t")
    assert _speakers(result) == [("a", "round_robin"), ("b", "round_robin"), ("c", "round_robin"), ("a", "round_robin")]


async def test_round_robin_as_the_method_itself_runs_until_the_round_limit():
    result = await _flow(ROUND_ROBIN, _roles("a", "b"), max_rounds=3).run("t")
    assert [e.name for e in result.history if e.name] == ["a", "b", "a"] and result.exit_reason.value == "turn_limit"


async def test_random_draws_repeat_with_the_seed_and_differ_with_another():
    roles = _roles("a", "b", "c")
    first = _speakers(await _flow(_for_rounds(RANDOM, 12), roles, seed=1).run("t"))
    again = _speakers(await _flow(_for_rounds(RANDOM, 12), roles, seed=1).run("t"))
    other = _speakers(await _flow(_for_rounds(RANDOM, 12), roles, seed=2).run("t"))
    assert first == again and first != other and {how for _, how in first} == {"random"}
    assert {r for r, _ in first} == {"a", "b", "c"}


async def test_manual_takes_a_number_or_a_name_and_falls_back_to_auto():
    answers = iter(["2", "a", "", "x", "9", "nobody"])
    asked = []

    def ask(question):
        asked.append(question)
        return next(answers)

    llm = ScriptedLLM(["c", "b"])
    result = await _flow(_for_rounds(MANUAL, 4), _roles("a", "b", "c"), ask=ask).run("t", llm=llm)
    # "2" -> b; "a" -> a; "" -> auto (the model says c); three answers naming nobody -> auto (b)
    assert _speakers(result) == [("b", "manual"), ("a", "manual"), ("c", "auto"), ("b", "auto")]
    assert "1: a\n2: b\n3: c" in asked[0] and len(asked) == 6


GRAPH = {"a": ["b"], "b": ["a", "c"], "c": []}


async def test_methods_choose_among_the_allowed_roles_only():
    llm = ScriptedLLM(["c", "b"])
    picked = iter(["a", AUTO, AUTO, AUTO, None])
    result = await _flow(lambda last, ctx: next(picked), _roles("a", "b", "c"), allowed_transitions=GRAPH).run("t", llm=llm)
    # a -> b: the only allowed role, no model call (AutoGen); b -> a or c: the model says c;
    # c -> nobody allowed: every role is considered (AutoGen), the model says b
    assert _speakers(result) == [("a", "function"), ("b", "only"), ("c", "auto"), ("b", "auto")]
    first = llm.requests[0].messages[-1].content
    assert "['a', 'c']" in first and "'b'" not in first
    assert "['a', 'b', 'c']" in llm.requests[1].messages[-1].content


async def test_one_eligible_speaker_makes_no_model_call():
    llm = ScriptedLLM([])
    picked = iter(["a", AUTO, None])
    result = await _flow(lambda last, ctx: next(picked), _roles("a", "b", "c"), allowed_transitions=GRAPH).run("t", llm=llm)
    assert _speakers(result) == [("a", "function"), ("b", "only")] and llm.requests == []


async def test_a_sink_of_the_graph_ends_the_chat():
    result = await _flow(_for_rounds(ROUND_ROBIN, 6), _roles("a", "b", "c"), allowed_transitions={"a": ["b"], "b": ["c"]}).run("t")
    # c is not in the graph: AutoGen's NoEligibleSpeaker, the chat ends
    assert [r for r, _ in _speakers(result)] == ["a", "b", "c"] and result.exit_state == "End"


async def test_a_function_that_breaks_the_graph_stops_the_run():
    picked = iter(["a", "c"])
    result = await _flow(lambda last, ctx: next(picked), _roles("a", "b", "c"), allowed_transitions=GRAPH).run("t")
    assert isinstance(result.error, DefinitionError)
    assert "'c' after 'a', which allowed_transitions does not allow (allowed: b)" in str(result.error)


def test_definition_errors_name_the_cause():
    with pytest.raises(DefinitionError, match="not a role of this group chat"):
        GroupChat(_roles("a"), select_speaker=ROUND_ROBIN, allowed_transitions={"a": ["z"]})
    with pytest.raises(DefinitionError, match="one of auto, manual, random, round_robin"):
        GroupChat(_roles("a"), select_speaker="sideways")  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match="may not be called 'random'"):
        GroupChat(_roles("random"), select_speaker=AUTO)
