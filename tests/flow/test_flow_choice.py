"""Pick, the choice output: scoring (plain and calibrated), a choice grammar, the seeded random
control, the record in the history, and the edge cases, on the test doubles."""

from __future__ import annotations

import pytest

from statebound.errors import DefinitionError, ModelOutputError, UnsupportedFeature
from statebound.flow import (
    CallLLM,
    CallTool,
    ExitReason,
    Flow,
    Instruction,
    Pick,
    Picked,
    State,
    always,
    check_flow,
    choice_grammar,
    is_choice_grammar,
    last_pick,
    offered,
    picks,
    tool_failed,
    tool_ok,
)
from statebound.llm.base import Capabilities, Message
from statebound.llm.testing import FunctionLLM, ScriptedLLM

COLOURS = ["red", "green", "blue"]


def one_pick(pick: Pick, *, instruction: str = "Which colour is the sky?") -> Flow:
    return Flow(name="pick", initial="Ask", states=[
        State("Ask", outputs=[Instruction(instruction), pick], transitions=[(always(), "End")]),
        State("End", final=True),
    ])


def by_words(preferred: dict[str, float]):
    """A scorer giving each word of a text the log-probability ``preferred`` names (else -5)."""
    return lambda context, text: [preferred.get(word, -5.0) for word in text.split()]


async def test_score_picks_the_best_candidate_and_records_the_choice():
    llm = ScriptedLLM(scorer=by_words({"blue": -0.5, "green": -2.0}))
    result = await one_pick(Pick(lambda ctx: COLOURS, name="colour")).run("sky", llm=llm)
    assert result.exit_reason is ExitReason.FINAL
    reply = result.history[-1]
    assert (reply.role, reply.source, reply.content, reply.state) == ("assistant", "llm", "blue", "Ask")
    assert reply.data == {"choice": {"name": "colour", "method": "score", "asked": "auto", "candidates": COLOURS,
                                     "scores": [-5.0, -2.0, -0.5], "picked": 2}}
    request = llm.requests[0]
    assert request.score == tuple(COLOURS) and request.messages is not None  # the history, as chat
    assert request.messages[-1] == Message("user", "sky\n\nWhich colour is the sky?")
    # the prompt once (six words), then each candidate's one word
    assert reply.usage is not None and reply.usage.prompt_tokens == 6 + 3 == result.usage.prompt_tokens
    assert reply.to_dict()["data"]["choice"]["picked"] == 2


async def test_mean_normalisation_compares_candidates_per_token():
    scores = {"dark": -1.0, "blue": -1.0, "red": -1.5}
    llm = ScriptedLLM(scorer=by_words(scores))
    mean = await one_pick(Pick(lambda ctx: ["red", "dark blue"])).run("sky", llm=llm)
    total = await one_pick(Pick(lambda ctx: ["red", "dark blue"], normalization="sum")).run("sky", llm=llm)
    assert (mean.history[-1].content, total.history[-1].content) == ("dark blue", "red")


async def test_a_baseline_prompt_removes_the_models_prior():
    def scorer(context: str, text: str) -> list[float]:
        prior = {"red": -0.5, "blue": -3.0}[text]  # the model likes "red" whatever it is asked
        evidence = {"red": 0.0, "blue": 2.5}[text] if "sky" in context else 0.0
        return [prior + evidence]

    llm = ScriptedLLM(scorer=scorer)
    plain = Pick(lambda ctx: ["red", "blue"], prompt=lambda ctx: f"Q: {ctx.task}\nA:")
    calibrated = Pick(lambda ctx: ["red", "blue"], prompt=lambda ctx: f"Q: {ctx.task}\nA:", baseline="Q: N/A\nA:")
    assert (await one_pick(plain).run("sky colour", llm=llm)).history[-1].content == "red"
    result = await one_pick(calibrated).run("sky colour", llm=llm)
    assert result.history[-1].content == "blue"
    assert [r.prompt for r in llm.requests[-2:]] == ["Q: sky colour\nA:", "Q: N/A\nA:"]
    assert result.history[-1].data["choice"]["scores"] == [0.0, 2.5]
    assert result.usage.calls == 2 and result.history[-1].usage.calls == 2


async def test_the_baseline_weight_scales_what_is_subtracted():
    def scorer(context: str, text: str) -> list[float]:
        return [{"red": -1.0, "blue": -2.0}[text] * (1.0 if "N/A" in context else 2.0)]

    pick = Pick(lambda ctx: ["red", "blue"], prompt="Q: sky\nA:", baseline="Q: N/A\nA:", baseline_weight=0.5)
    result = await one_pick(pick).run("x", llm=ScriptedLLM(scorer=scorer))
    assert result.history[-1].data["choice"]["scores"] == [-2.0 + 0.5, -4.0 + 1.0]


async def test_grammar_holds_greedy_generation_to_the_candidates():
    def respond(request):
        assert request.temperature == 0.0 and request.max_tokens == len('say "hi"') + 2
        return offered(request.grammar)[1]

    llm = FunctionLLM(respond, capabilities=Capabilities(chat=True, grammar=True))
    result = await one_pick(Pick(lambda ctx: ["no", 'say "hi"'], method="grammar")).run("x", llm=llm)
    assert result.history[-1].content == 'say "hi"'
    assert result.history[-1].data["choice"] == {"name": "choice", "method": "grammar", "asked": "grammar",
                                                 "candidates": ["no", 'say "hi"'], "scores": None, "picked": 1}


async def test_a_grammar_reply_that_is_no_candidate_is_a_model_output_error():
    llm = FunctionLLM(lambda r: "purple", capabilities=Capabilities(chat=True, grammar=True))
    result = await one_pick(Pick(lambda ctx: COLOURS, method="grammar")).run("x", llm=llm)
    assert result.exit_reason is ExitReason.ERROR and isinstance(result.error, ModelOutputError)


async def test_random_is_seeded_needs_no_model_and_spreads_over_the_candidates():
    flow = one_pick(Pick(lambda ctx: COLOURS, method="random", seed=3))
    first = [(await flow.run(f"task {i}")).history[-1].content for i in range(30)]
    again = [(await flow.run(f"task {i}")).history[-1].content for i in range(30)]
    other_seed = one_pick(Pick(lambda ctx: COLOURS, method="random", seed=4))
    reseeded = [(await other_seed.run(f"task {i}")).history[-1].content for i in range(30)]
    assert first == again and first != reseeded
    assert set(first) == set(COLOURS)
    result = await flow.run("task 0")
    assert result.usage.calls == 0 and result.history[-1].data["choice"]["scores"] is None


async def test_one_candidate_is_taken_without_a_model_and_duplicates_are_dropped():
    llm = ScriptedLLM(scorer=by_words({}))
    result = await one_pick(Pick(lambda ctx: ["only", "", "only"])).run("x", llm=llm)
    assert result.history[-1].content == "only" and not llm.requests
    assert result.history[-1].data["choice"]["candidates"] == ["only"]
    deduped = await one_pick(Pick(lambda ctx: ["a", "b", "a"])).run("x", llm=llm)
    assert llm.requests[-1].score == ("a", "b") and deduped.history[-1].data["choice"]["candidates"] == ["a", "b"]


async def test_no_candidates_stops_the_run_unless_when_empty_says_what_to_reply():
    failed = await one_pick(Pick(lambda ctx: [], name="table")).run("x")
    assert failed.exit_reason is ExitReason.ERROR and isinstance(failed.error, DefinitionError)
    assert "when_empty" in str(failed.error) and "'table'" in str(failed.error)
    flow = Flow(name="empty", initial="Ask", states=[
        State("Ask", outputs=[Pick(lambda ctx: [], name="table", when_empty="none")],
              transitions=[(lambda ctx: last_pick(ctx, "table").index is None, "Nothing"), (always(), "End")]),
        State("Nothing", final=True), State("End", final=True)])
    result = await flow.run("x")
    assert result.exit_state == "Nothing" and result.history[-1].content == "none"
    assert result.history[-1].data["choice"]["picked"] is None


async def test_a_model_that_cannot_score_or_take_grammars_is_refused_with_the_alternative():
    plain = ScriptedLLM(["x"], capabilities=Capabilities(chat=True))
    scored = await one_pick(Pick(lambda ctx: COLOURS)).run("x", llm=plain)
    assert isinstance(scored.error, UnsupportedFeature) and "method=random" in str(scored.error)
    with pytest.raises(UnsupportedFeature, match="Pick 'choice': scripted cannot run method=grammar: it lacks "
                                                 "generation held to a grammar"):  # refused before the run
        await one_pick(Pick(lambda ctx: COLOURS, method="grammar")).run("x", llm=plain)
    assert plain.requests == []


def test_a_pick_is_checked_when_built():
    with pytest.raises(DefinitionError, match="unknown"):
        Pick(lambda ctx: COLOURS, method="best")  # type: ignore[arg-type]
    with pytest.raises(DefinitionError, match="candidates"):
        Pick("red")  # type: ignore[arg-type]  # one string, not a list of candidates
    assert Pick(lambda ctx: COLOURS, name="colour", method="random").label == "Pick(colour, random)"


async def test_picks_and_last_pick_read_the_choices_back_from_the_history():
    flow = Flow(name="two", initial="A", states=[
        State("A", outputs=[Pick(lambda ctx: ["x", "y"], name="first", method="random"),
                            Pick(lambda ctx: ["p", "q"], name="second", method="random")],
              transitions=[(always(), "End")]),
        State("End", final=True)])
    result = await flow.run("t")
    found = picks(result.history)
    assert [p.name for p in found] == ["first", "second"]
    assert found[0].text in ("x", "y") and found[1].candidates == ("p", "q")
    assert picks(result.history, "second") == [found[1]]
    assert Picked.from_entry(result.history[0]) is None


def test_choice_grammar_round_trips_quotes_and_backslashes():
    candidates = ['say "hi"', "back\\slash", "plain"]
    grammar = choice_grammar(candidates)
    assert grammar.startswith("root ::= ") and offered(grammar) == candidates
    with pytest.raises(ValueError, match="at least one"):
        choice_grammar([])
    with pytest.raises(ValueError, match="not a choice grammar"):
        offered('start ::= "x"')


async def test_a_call_held_to_a_choice_grammar_is_recorded_as_a_choice():
    replies = iter(["green", " blue\n", "purple"])  # a candidate, one with spaces, a backend ignoring the grammar
    llm = FunctionLLM(lambda request: next(replies), capabilities=Capabilities(chat=True, grammar=True))
    flow = Flow(name="call", initial="Ask", states=[
        State("Ask", outputs=[CallLLM(grammar=lambda ctx: choice_grammar(COLOURS))] * 3,
              transitions=[(always(), "End")]),
        State("End", final=True),
    ])
    result = await flow.run("sky", llm=llm)
    assert [p.index for p in picks(result.history, "Ask")] == [1, 2, None]
    assert result.history[1].data == {"choice": {"name": "Ask", "method": "grammar", "asked": "grammar", "candidates": COLOURS,
                                                 "scores": None, "picked": 1}}


async def test_other_grammars_and_no_grammar_record_no_choice():
    grammars = iter(['root ::= "a" tail\ntail ::= "b"', None, 'root ::= "x" | [a-z]+'])
    llm = FunctionLLM(lambda request: "ab", capabilities=Capabilities(chat=True, grammar=True))
    flow = Flow(name="call", initial="Ask", states=[
        State("Ask", outputs=[CallLLM(grammar=lambda ctx: next(grammars))] * 3, transitions=[(always(), "End")]),
        State("End", final=True),
    ])
    result = await flow.run("x", llm=llm)
    assert [e.data for e in result.history if e.source == "llm"] == [None, None, None]
    assert not is_choice_grammar('root ::= "x" | [a-z]+') and is_choice_grammar(choice_grammar(["x", "y|z"]))


def test_a_pick_after_a_tool_keeps_tool_ok_and_tool_failed_exhaustive():
    flow = Flow(name="tool-then-pick", initial="A", states=[
        State("A", outputs=[CallTool(lambda ctx: "ok"), Pick(lambda ctx: COLOURS)],
              transitions=[(tool_ok(), "End"), (tool_failed(), "End")]),
        State("End", final=True)])
    assert not [d for d in check_flow(flow) if d.code == "no-default-transition"]
