"""A flow run's span tree and attributes, on the SDK's in-memory exporter."""

from __future__ import annotations

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from statebound import telemetry
from statebound.examples.arithmetic import EXAMPLE_TASK, flow
from statebound.flow import Flow, State, llm_choice
from statebound.llm.testing import ScriptedLLM


def by_name(exporter: InMemorySpanExporter) -> dict[str, list]:
    out: dict[str, list] = {}
    for span in exporter.get_finished_spans():
        out.setdefault(span.name, []).append(span)
    return out


def test_a_run_is_a_span_with_a_child_per_state_and_its_calls_and_tools_below(spans):
    result = flow.run_sync(EXAMPLE_TASK, llm=ScriptedLLM(["I would guess", "Expression: 3*12-5"]))
    named = by_name(spans)
    (run,) = named["invoke_agent arithmetic"]
    assert run.parent is None and run.attributes["statebound.exit_state"] == result.exit_state
    assert run.attributes["gen_ai.usage.input_tokens"] == result.usage.prompt_tokens > 0
    states = [s for s in spans.get_finished_spans() if s.name.startswith("state ")]
    assert [(s.attributes["statebound.state"], s.attributes["statebound.visit"]) for s in states] == [
        (name, result.trajectory[:i + 1].count(name)) for i, name in enumerate(result.trajectory)]
    assert all(s.parent.span_id == run.context.span_id for s in states)
    calls = named["chat scripted"]
    assert len(calls) == 2
    for call in calls:
        parent = next(s for s in states if s.context.span_id == call.parent.span_id)
        assert parent.attributes["statebound.state"] in {"Solve", "Error"}
        assert call.attributes["gen_ai.operation.name"] == "chat"
        assert call.attributes["gen_ai.request.model"] == "scripted"
        assert call.attributes["gen_ai.usage.output_tokens"] > 0
        assert call.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    tools = [s for s in spans.get_finished_spans() if s.name.startswith("execute_tool")]
    assert [s.attributes["statebound.tool.ok"] for s in tools] == [False, True]
    assert all(s.attributes["gen_ai.operation.name"] == "execute_tool" for s in tools)
    assert all(s.parent.span_id in {st.context.span_id for st in states} for s in tools)


def test_an_llm_decided_transition_is_a_pick_span_with_candidates_scores_and_the_pick(spans):
    router = Flow(name="route", initial="Reply", max_turns=2, states=[
        State("Reply", transitions=[llm_choice(["Answer", "Fix"], fallback="Answer", method="score")]),
        State("Answer", final=True), State("Fix", final=True)])
    scorer = lambda context, text: [-0.1 if text == "Fix" and "Error" in context else -3.0]  # noqa: E731
    router.run_sync("Error", llm=ScriptedLLM(scorer=scorer))
    (pick,) = by_name(spans)["choose Reply"]
    assert pick.attributes["statebound.choice.candidates"] == ("Answer", "Fix")
    assert pick.attributes["statebound.choice.picked"] == "Fix"
    scores = pick.attributes["statebound.choice.scores"]
    assert len(scores) == 2 and scores[1] > scores[0]
    (reply,) = by_name(spans)["state Reply"]
    assert pick.parent.span_id == reply.context.span_id
    assert reply.attributes["statebound.transition.target"] == "Fix"


def test_off_again_no_span_is_made(spans):
    telemetry.disable()
    flow.run_sync(EXAMPLE_TASK, llm=ScriptedLLM(["Expression: 3*12-5"]))
    assert spans.get_finished_spans() == ()
