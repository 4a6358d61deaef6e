import math

import pytest

from statebound.agents.qa.summary_choice import (
    PASS_ALPHA,
    choose_observation,
    length_penalty,
    literal_grammar,
    normalized_score,
    score_continuation,
)
from statebound.errors import UnsupportedFeature
from statebound.llm.base import Capabilities, Choice, TokenLogprob
from statebound.llm.testing import FunctionLLM

GRAMMAR_CAPS = Capabilities(completion=True, chat=True, logprobs=True, grammar=True)


def test_length_penalty_by_hand():
    assert length_penalty(1, alpha=0.6) == 1.0
    assert length_penalty(7, alpha=1.0) == pytest.approx(2.0)  # (5+7)/(5+1)
    assert length_penalty(13, alpha=0.5) == pytest.approx(math.sqrt(3))  # sqrt(18/6)


def test_normalized_score_by_hand():
    # sum = -6 over 7 tokens; alpha = 1 -> penalty 2 -> -3
    assert normalized_score([-1.0] * 6 + [0.0], alpha=1.0) == pytest.approx(-3.0)
    assert normalized_score([], alpha=1.0) == -math.inf


def test_longer_text_can_win_with_length_normalisation():
    # summary: 1 token at -2.0 -> -2.0 / 1 = -2.0
    # raw: 19 tokens at -0.25 -> -4.75 / ((24/6)^1) = -1.1875 (alpha = 1) -> raw wins
    choice = choose_observation("short", [-2.0], "long raw", [-0.25] * 19, alpha=1.0)
    assert choice.returned == "raw" and choice.text == "long raw"
    assert choice.summary_score == pytest.approx(-2.0)
    assert choice.raw_score == pytest.approx(-1.1875)
    # with alpha = 0 there is no normalisation: -2.0 > -4.75 -> summary wins
    assert choose_observation("short", [-2.0], "long raw", [-0.25] * 19, alpha=0.0).returned == "summary"


def test_tie_goes_to_the_raw_list_as_in_the_authors_code_and_empty_text_loses():
    assert PASS_ALPHA == 0.3  # IBM's ApiModel.score(alpha=0.3)
    assert choose_observation("s", [-1.0], "o", [-1.0]).returned == "raw"
    assert choose_observation("s", [-1.0], "o", [-1.0], tie="summary").returned == "summary"
    assert choose_observation("", [], "o", [-50.0]).returned == "raw"


def test_literal_grammar_escapes():
    assert literal_grammar('say "hi"\\\n') == 'root ::= "say \\"hi\\"\\\\\\n"'


def _scoring_llm(values):
    def respond(request):
        text = request.grammar.split('"', 1)[1][:-1]  # what the grammar forces
        return Choice(text=text, logprobs=tuple(TokenLogprob(t, v) for t, v in zip(text.split(), values[text])))

    return FunctionLLM(respond, capabilities=GRAMMAR_CAPS)


async def test_score_continuation_reads_the_forced_logprobs_and_choice_follows():
    values = {"Nixon was the namesake.": [-0.5, -0.5, -0.5, -0.5], "1. Milhouse was named after Nixon.": [-3.0] * 6}
    llm = _scoring_llm(values)
    context = "[Question] Who? [Thought] search [Summary] "
    summary = await score_continuation(llm, context, "Nixon was the namesake.")
    raw = await score_continuation(llm, context, "1. Milhouse was named after Nixon.")
    assert summary.logprobs == (-0.5,) * 4 and raw.logprobs == (-3.0,) * 6
    request = llm.requests[0]
    assert request.prompt == context and request.logprobs and request.temperature == 0.0
    choice = choose_observation("Nixon was the namesake.", summary.logprobs, "raw", raw.logprobs)
    assert choice.returned == "summary"
    assert choice.summary_score == pytest.approx(-2.0 / length_penalty(4, alpha=0.3))


async def test_score_continuation_needs_grammar_and_logprobs():
    llm = FunctionLLM(lambda r: "x", capabilities=Capabilities(chat=True))
    with pytest.raises(UnsupportedFeature, match="pass-no-summary"):
        await score_continuation(llm, "ctx", "text")
    assert (await score_continuation(llm, "ctx", "")).logprobs == ()


async def test_a_scoring_backend_is_asked_to_score_not_to_decode():
    def respond(request):
        assert request.grammar is None and request.score == "Nixon was the namesake."
        return Choice(text=request.score, logprobs=tuple(TokenLogprob(t, -0.25) for t in request.score.split()))

    llm = FunctionLLM(respond, capabilities=Capabilities(chat=True, scoring=True))
    scored = await score_continuation(llm, "ctx ", "Nixon was the namesake.")
    assert scored.logprobs == (-0.25,) * 4 and llm.requests[0].prompt == "ctx "


async def test_a_double_that_does_not_score_refuses_a_scoring_request():
    from statebound.llm.base import Request

    llm = FunctionLLM(lambda r: "x", capabilities=GRAMMAR_CAPS)
    with pytest.raises(UnsupportedFeature, match="does not score"):
        await llm.complete(Request(prompt="ctx", score="text"))
    with pytest.raises(ValueError, match="without a grammar"):
        Request(prompt="ctx", score="text", grammar='root ::= "x"')
    with pytest.raises(ValueError, match="continues the prompt once"):
        Request(prompt="ctx", score=("a", "b"), n=2)
    with pytest.raises(ValueError, match="non-empty tuple"):
        Request(prompt="ctx", score=())
