"""The choosers: which one ``auto`` takes on each backend, lettered options (label) with their
rounds and calibration, grammar through a JSON-schema enum, and the one-line refusals; on doubles
whose replies carry top log-probabilities the way servers send them."""

from __future__ import annotations

import json
import math

import pytest

from statebound.errors import DefinitionError, UnsupportedFeature
from statebound.flow import ExitReason, Flow, Instruction, Pick, State, always
from statebound.flow.choice import choice_schema
from statebound.flow.choosers import label_messages, label_prompt, label_scores, resolve, usable
from statebound.llm.base import Capabilities, Choice, Message, Request, TokenLogprob
from statebound.llm.testing import FunctionLLM

COLOURS = ["red", "green", "blue"]
SERVER = Capabilities(chat=True, completion=True, logprobs=True, top_logprobs=20)


def one_pick(pick: Pick) -> Flow:
    return Flow(name="pick", initial="Ask", states=[
        State("Ask", outputs=[Instruction("Which colour is the sky?"), pick], transitions=[(always(), "End")]),
        State("End", final=True)])


def letters(preferred: dict[str, float]) -> Choice:
    """A one-token reply whose alternatives give each letter in ``preferred`` its log-probability."""
    top = tuple(sorted(preferred.items(), key=lambda pair: -pair[1]))
    return Choice(text=top[0][0], logprobs=(TokenLogprob(top[0][0], top[0][1], top),))


def listed(request: Request) -> list[str]:
    """The options a lettered request lists, in order."""
    text = request.prompt if request.prompt is not None else (request.messages or ())[-1].content
    return [line[3:] for line in text.splitlines() if len(line) > 3 and line[1:3] == ". "]


def test_auto_takes_score_then_label_then_grammar_and_never_random():
    scoring = Capabilities(chat=True, scoring=True, chat_scoring=True, top_logprobs=20, grammar=True)
    assert resolve("auto", scoring, chat=True, model="m") == "score"
    text_scoring = Capabilities(chat=True, completion=True, scoring=True, top_logprobs=20)
    assert resolve("auto", text_scoring, chat=True, model="m") == "label"  # chat prompts need chat scoring
    assert resolve("auto", text_scoring, chat=False, model="m") == "score"
    assert resolve("auto", Capabilities(chat=True, grammar=True), chat=True, model="m") == "grammar"
    assert resolve("auto", Capabilities(chat=True, schema=True), chat=True, model="m") == "grammar"
    with pytest.raises(UnsupportedFeature, match="can run no chooser.*method=random"):
        resolve("auto", Capabilities(chat=True), chat=True, model="m")
    assert usable(Capabilities(chat=True), chat=True) == ()


def test_a_method_the_backend_cannot_run_names_what_is_missing_and_what_works():
    with pytest.raises(UnsupportedFeature, match=r"cannot run method=score: it lacks .*chat scoring.*method=label works"):
        resolve("score", Capabilities(chat=True, scoring=True, top_logprobs=20), chat=True, model="openai:local")
    with pytest.raises(UnsupportedFeature, match="but method=random"):
        resolve("label", Capabilities(chat=True), chat=True, model="m")
    with pytest.raises(DefinitionError, match="unknown.*'auto', 'score', 'label', 'grammar', 'random'"):
        Pick(lambda ctx: COLOURS, method="best")  # type: ignore[arg-type]


def test_label_lists_the_options_reads_the_letters_and_records_the_scores():
    llm = FunctionLLM(lambda request: letters({"A": -3.0, " B": -0.4, "C": -2.0, "The": -1.0}),
                      capabilities=SERVER)
    result = one_pick(Pick(lambda ctx: COLOURS, name="colour")).run_sync("sky", llm=llm)
    assert result.exit_reason is ExitReason.FINAL and result.history[-1].content == "green"
    request = llm.requests[0]
    assert (request.max_tokens, request.top_logprobs, request.temperature) == (1, 20, 0.0)
    assert listed(request) == COLOURS and "Which colour is the sky?" in (request.messages or ())[-1].content
    choice = result.history[-1].data["choice"]
    assert (choice["method"], choice["asked"], choice["picked"]) == ("label", "auto", 1)
    assert choice["scores"] == pytest.approx([-3.0, -0.4, -2.0])


def test_label_with_a_baseline_subtracts_the_letters_prior():
    def respond(request: Request) -> Choice:
        blind = "N/A" in (request.messages or ())[-1].content
        return letters({"A": -0.1, "B": -3.0, "C": -3.0} if blind else {"A": -0.5, "B": -1.5, "C": -4.0})

    pick = Pick(lambda ctx: COLOURS, method="label", baseline=lambda ctx: [Message("user", "N/A")])
    llm = FunctionLLM(respond, capabilities=SERVER)
    result = one_pick(pick).run_sync("sky", llm=llm)
    assert result.history[-1].content == "green"  # -1.5 + 3.0 beats -0.5 + 0.1 and -4.0 + 3.0
    assert len(llm.requests) == 2 and result.history[-1].usage.calls == 2


def test_more_options_than_reported_alternatives_are_chosen_in_rounds():
    candidates = [f"option {i}" for i in range(7)]

    def respond(request: Request) -> Choice:  # prefers "option 5" wherever it is listed, else the last
        shown = listed(request)
        best = shown.index("option 5") if "option 5" in shown else len(shown) - 1
        return letters({"ABCDEFGHIJ"[i]: (-0.2 if i == best else -2.0 - i) for i in range(len(shown))})

    llm = FunctionLLM(respond, capabilities=Capabilities(chat=True, top_logprobs=3))
    result = one_pick(Pick(lambda ctx: candidates, method="label")).run_sync("x", llm=llm)
    assert result.history[-1].content == "option 5"
    assert [listed(r) for r in llm.requests] == [candidates[0:3], candidates[3:5], candidates[5:7],
                                                  ["option 2", "option 4", "option 5"]]
    scores = result.history[-1].data["choice"]["scores"]
    assert len(scores) == 7 and scores[5] == pytest.approx(-0.2)  # first-round scores, one per candidate


def test_label_scores_sum_a_letters_spellings_and_ignore_words():
    token = TokenLogprob("A", -1.0, (("A", -1.0), (" A", -1.0), ("a", -0.1), ("B.", -0.5), (" C", -2.0)))
    scores = label_scores(token, 3)
    assert scores[0] == pytest.approx(-1.0 + math.log(2)) and scores[1] == -math.inf and scores[2] == -2.0
    assert label_scores(token, 3, floor=True)[1] == -2.0  # a missing letter's prior: the least reported


def test_label_prompts_keep_the_question_and_quote_a_started_reply():
    text = label_prompt("Question: sky colour\nColour:", COLOURS)
    assert text.startswith("Question: sky colour\nColour:\n\nOptions:\nA. red\nB. green\nC. blue\n")
    messages = label_messages((Message("system", "s"), Message("user", "Which?"), Message("assistant", "SELECT")),
                              ["a", "b"])
    assert [m.role for m in messages] == ["system", "user"]
    assert "Which?" in messages[-1].content and "The reply so far: SELECT" in messages[-1].content


def test_grammar_goes_through_a_json_schema_enum_where_the_backend_takes_no_grammar():
    llm = FunctionLLM(lambda request: json.dumps({"choice": "blue"}), capabilities=Capabilities(chat=True, schema=True))
    result = one_pick(Pick(lambda ctx: COLOURS, method="grammar")).run_sync("sky", llm=llm)
    assert result.history[-1].content == "blue"
    assert llm.requests[0].schema == choice_schema(COLOURS) and llm.requests[0].grammar is None
    ignored = FunctionLLM(lambda request: "blue, I think", capabilities=Capabilities(chat=True, schema=True))
    failed = one_pick(Pick(lambda ctx: COLOURS, method="grammar")).run_sync("sky", llm=ignored)
    assert failed.exit_reason is ExitReason.ERROR and "ignored the grammar or schema" in str(failed.error)


def test_random_needs_no_model_and_one_candidate_needs_no_chooser():
    drawn = one_pick(Pick(lambda ctx: COLOURS, method="random")).run_sync("sky")
    assert drawn.history[-1].data["choice"]["method"] == "random"
    only = one_pick(Pick(lambda ctx: ["red"])).run_sync("sky")  # no model at all: nothing to choose
    assert only.exit_reason is ExitReason.FINAL and only.history[-1].data["choice"]["method"] == "auto"


def test_a_grammar_choice_on_a_text_prompt_needs_a_grammar_not_a_schema():
    """A server's /completions takes no response_format (llama-cpp-python's ignores it): a text
    prompt's choice held by a schema would not be held, so it is refused before the run."""
    schema_only = Capabilities(completion=True, chat=True, schema=True)
    assert resolve("grammar", schema_only, chat=True, model="m") == "grammar"
    with pytest.raises(UnsupportedFeature, match="cannot run method=grammar: it lacks generation held to a "
                                                 r"grammar \(a JSON schema holds chat replies only\)"):
        resolve("grammar", schema_only, chat=False, model="m")
    llm = FunctionLLM(lambda request: "red", capabilities=schema_only)
    flow = Flow(name="one", initial="Ask", states=[
        State("Ask", outputs=[Pick(lambda ctx: ["red", "blue"], prompt="Colour:", method="grammar")],
              transitions=[(always(), "End")]),
        State("End", final=True)])
    with pytest.raises(UnsupportedFeature, match="Pick 'choice'"):
        flow.run_sync("x", llm=llm)
