"""LLM-decided transitions and group-chat speaker selection through the choosers: which method
runs, what is recorded, the refusal before the run, and the static check; on doubles."""

from __future__ import annotations

import pytest

from statebound.errors import DefinitionError, UnsupportedFeature
from statebound.flow import (
    CallLLM,
    Flow,
    GroupChat,
    Role,
    SpeakerSelected,
    State,
    TransitionTaken,
    always,
    check_flow,
    llm_choice,
)
from statebound.llm.base import Capabilities
from statebound.llm.testing import FunctionLLM, ScriptedLLM

DESCRIPTIONS = {"Answer": "the reply gives the final answer", "Fix": "the reply reports an error"}


def router(method: str = "auto", *, described: bool = True) -> Flow:
    return Flow(name="route", initial="Reply", max_turns=2, states=[
        State("Reply", transitions=[llm_choice(["Answer", "Fix"], fallback="Answer", method=method)]),  # type: ignore[arg-type]
        *(State(name, description=what if described else "", final=True) for name, what in DESCRIPTIONS.items()),
    ])


def errors_lead_to_fix(context: str, text: str) -> list[float]:
    """A scorer: after an error, the words of Fix's description are likely; without one, Answer's."""
    likely = DESCRIPTIONS["Fix" if "Error" in context else "Answer"]
    return [-0.2 if text == likely else -2.0] * len(text.split())


def taken(result) -> TransitionTaken:
    return next(e for e in result.events if isinstance(e, TransitionTaken))


def test_auto_scores_the_states_descriptions_calibrated_and_records_the_choice():
    llm = ScriptedLLM(scorer=errors_lead_to_fix)
    result = router().run_sync("Error: no such table", llm=llm, record_events=True)
    assert result.exit_state == "Fix"
    event = taken(result)
    assert event.choice["method"] == "score" and event.choice["asked"] == "auto"
    assert event.choice["candidates"] == list(DESCRIPTIONS.values()) and event.choice["targets"] == ["Answer", "Fix"]
    assert event.reason.startswith("LLM chose Fix by score (Answer ")
    scored = [r for r in llm.requests if r.score is not None]
    assert len(scored) == 2 and "Error" not in scored[1].messages[-1].content  # the baseline: the question alone
    assert [c.kind for c in result.calls] == ["choice", "choice"]


def test_states_without_their_own_description_are_chosen_by_name():
    llm = ScriptedLLM(scorer=lambda context, text: [-0.1 if text == "Fix" and "Error" in context else -3.0])
    result = router("score", described=False).run_sync("Error", llm=llm, record_events=True)
    assert result.exit_state == "Fix" and taken(result).choice["candidates"] == ["Answer", "Fix"]


def test_text_is_the_papers_free_answer_with_its_fallback():
    result = router("text").run_sync("Error", llm=ScriptedLLM(["Fix it"], scorer=errors_lead_to_fix),
                                      record_events=True)
    assert result.exit_state == "Answer" and "fallback to Answer" in taken(result).reason
    assert taken(result).choice is None


def test_auto_on_a_model_without_a_chooser_answers_freely():
    result = router().run_sync("Error", llm=ScriptedLLM(["Fix"]), record_events=True)
    assert result.exit_state == "Fix" and taken(result).reason == "LLM chose Fix"


def test_a_chooser_the_model_cannot_run_is_refused_before_the_run_starts():
    llm = ScriptedLLM(["Fix"], capabilities=Capabilities(chat=True, grammar=True))
    with pytest.raises(UnsupportedFeature, match="cannot run method=score.*method=grammar works"):
        router("score").run_sync("Error", llm=llm)
    assert llm.requests == []
    with pytest.raises(DefinitionError, match="llm_choice method 'best' is unknown"):
        llm_choice(["Fix"], fallback="Fix", method="best")  # type: ignore[arg-type]


def test_flow_check_warns_where_a_free_answer_could_be_a_choice():
    scoring = ScriptedLLM(scorer=errors_lead_to_fix)
    codes = [d.code for d in check_flow(router("text"), scoring)]
    assert "llm-choice-text" in codes
    assert "llm-choice-text" not in [d.code for d in check_flow(router("text"), ScriptedLLM())]
    assert "llm-choice-text" not in [d.code for d in check_flow(router("auto"), scoring)]


def test_group_chat_auto_picks_the_speaker_with_a_chooser():
    def respond(request):
        return "Coder" if request.grammar else "done"

    llm = FunctionLLM(respond, capabilities=Capabilities(chat=True, grammar=True))
    chat = GroupChat([Role("Planner", CallLLM(max_tokens=4), description="plans"),
                      Role("Coder", CallLLM(max_tokens=4), description="writes code")],
                     select_speaker=lambda last, ctx: None if last else "auto", llm=llm, auto_method="grammar")
    flow = Flow(name="chat", initial="Talk", states=[
        State("Talk", outputs=[chat], transitions=[(always(), "End")]), State("End", final=True)])
    result = flow.run_sync("Write a function.", llm=llm, record_events=True)
    selected = next(e for e in result.events if isinstance(e, SpeakerSelected))
    assert (selected.role, selected.how, selected.choice["method"]) == ("Coder", "auto", "grammar")
    assert selected.choice["candidates"] == ["Planner", "Coder"]
