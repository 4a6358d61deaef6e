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


def test_a_sub_machine_and_each_parallel_branch_are_spans_under_the_state_that_runs_them(spans):
    from statebound.examples.fan_out import Notes, build_flow, search
    from statebound.flow import Sub, always

    research = build_flow()  # Gather: one `search` sub-machine per question, side by side
    check = State("Check", outputs=[Sub(search, vars_in=lambda ctx: {"question": "one more"})],
                  transitions=[(always(), "End")])
    flow = Flow(name="research", initial="Gather", vars=Notes, max_turns=60, states=[
        State("Gather", outputs=research.states_by_name["Gather"].outputs, transitions=[(always(), "Check")]),
        check, State("End", final=True)])
    assert flow.run_sync("research", llm=ScriptedLLM(["a note"] * 9)).ok
    named = by_name(spans)
    (run,) = named["invoke_agent research"]
    gather, checked = (next(s for s in named[f"state {name}"] if s.parent.span_id == run.context.span_id)
                       for name in ("Gather", "Check"))
    children = named["invoke_agent search"]
    assert sum(s.parent.span_id == gather.context.span_id for s in children) == 8
    assert sum(s.parent.span_id == checked.context.span_id for s in children) == 1
    looks = named["state Look"]  # each child's states are under its own run span, its model calls under them
    assert sorted(s.parent.span_id for s in looks) == sorted(s.context.span_id for s in children)
    assert {c.parent.span_id for c in named["chat scripted"]} == {s.context.span_id for s in looks}
