"""Static checks of flows (``check_flow``, ``statebound flow check``): each check on a flow that
triggers it and on a near-identical one that does not, then every flow the project ships."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from statebound.cli.app import app
from statebound.flow import (
    AskHuman,
    CallLLM,
    CallTool,
    ExitReason,
    Flow,
    Instruction,
    Rule,
    State,
    always,
    check_flow,
    choose,
    contains,
    llm_choice,
    matches,
    tool_failed,
    tool_ok,
)


def _flow(*states: State, max_turns: int = 20, visit_limits: dict[str, int] | None = None) -> Flow:
    return Flow(name="t", initial=states[0].name, states=[*states, State("End", final=True)],
                max_turns=max_turns, visit_limits=visit_limits)


def _ask(*transitions, outputs=None) -> State:
    return State("Ask", outputs=[CallLLM()] if outputs is None else outputs, transitions=transitions)


def found(flow: Flow) -> list[tuple[str | None, str]]:
    return [(d.state, d.code) for d in check_flow(flow)]


def codes(flow: Flow) -> set[str]:
    return {d.code for d in check_flow(flow)}


def run(flow: Flow):
    return flow.run_sync("task", record_events=False)


# ---- what rules say about themselves ---------------------------------------------------------
def test_rules_know_when_they_always_fire():
    assert always().catch_all and (contains("x") | always()).catch_all
    assert not (contains("x") & always()).catch_all and not (~always()).catch_all
    assert (always() & always()).catch_all and not contains("x").catch_all
    assert llm_choice(["End"], fallback="End").catch_all
    assert not choose(lambda ctx: None, targets=["End"]).catch_all
    assert (contains("x") | ~matches("y")).history_only and not (contains("x") | (lambda c: True)).history_only
    assert tool_ok("calc").tool_status == ("calc", True) and tool_failed().tool_status == (None, False)


# ---- shadowed-transition -------------------------------------------------------------------
@pytest.mark.parametrize("catch_all", [always(), contains("x") | always(), llm_choice(["End"], fallback="End")])
def test_transition_after_a_catch_all_is_shadowed(catch_all):
    first = (catch_all, "End") if isinstance(catch_all, Rule) else catch_all
    flow = _flow(_ask(first, (contains("y"), "Ask")))
    assert found(flow) == [("Ask", "shadowed-transition")]
    message = check_flow(flow)[0].message
    assert """transition "contains 'y'" -> Ask comes after""" in message and "can never fire" in message


@pytest.mark.parametrize("first", [contains("x"), contains("x") & always()])
def test_transition_after_a_rule_that_may_fail_is_not_shadowed(first):
    assert "shadowed-transition" not in codes(_flow(_ask((first, "End"), (always(), "Ask"))))


def test_choose_without_fallback_shadows_nothing():
    pick = choose(lambda ctx: None, targets=["End"])
    assert found(_flow(_ask(pick, (always(), "End")))) == []


# ---- duplicate-rule ----------------------------------------------------------------------
def _made_for(word: str):
    def test(ctx) -> bool:  # the same label for every word, as in a rule factory
        return word in ctx.history[-1].content

    return test


@pytest.mark.parametrize("first, second", [
    (contains("x"), contains("x")),
    (contains("x") & ~matches("y"), contains("x") & ~matches("y")),
    (_made_for("x"), _made_for("x")),
])
def test_a_repeated_rule_is_reported(first, second):
    flow = _flow(_ask((first, "End"), (second, "Ask"), (always(), "End")))
    assert found(flow) == [("Ask", "duplicate-rule")]


def test_the_same_function_twice_is_a_duplicate():
    rule = _made_for("x")
    assert found(_flow(_ask((rule, "End"), (rule, "Ask"), (always(), "End")))) == [("Ask", "duplicate-rule")]


@pytest.mark.parametrize("first, second", [
    (contains("x"), contains("y")),
    (contains("x"), contains("x", ignore_case=True)),  # the same label, another rule
    (_made_for("x"), _made_for("y")),  # the same label "test", other captured values
    (contains("x") & matches("y"), contains("x") & matches("z")),
])
def test_rules_that_only_look_alike_are_not_duplicates(first, second):
    assert found(_flow(_ask((first, "End"), (second, "End"), (always(), "End")))) == []


# ---- no-default-transition ---------------------------------------------------------------
def test_a_state_whose_transitions_can_all_fail_needs_a_default():
    flow = _flow(_ask((contains("x"), "End")))
    assert found(flow) == [("Ask", "no-default-transition")]
    assert "(always(), 'End')" in check_flow(flow)[0].message
    assert run(flow.replace(states=[_ask((contains("x"), "End"), outputs=[Instruction("hi")]),
                                    State("End", final=True)])).exit_reason is ExitReason.ERROR
    assert found(_flow(_ask((contains("x"), "End"), (always(), "Ask")))) == [("Ask", "unbounded-self-loop")]


def test_a_choose_that_always_names_a_state_needs_no_default():
    def always_end(ctx) -> str:
        return "End"

    assert found(_flow(_ask(choose(always_end, targets=["End"])))) == [("Ask", "no-default-transition")]
    assert found(_flow(_ask(choose(always_end, targets=["End"], catch_all=True)))) == []


def calc(ctx) -> str:
    return "ok"


@pytest.mark.parametrize("outputs, transitions, covered", [
    ([CallTool(calc)], [(tool_ok(), "End"), (tool_failed(), "Ask")], True),
    ([CallTool(calc), CallLLM()], [(tool_failed("calc"), "Ask"), (tool_ok(), "End")], True),
    ([CallTool(calc), AskHuman("Go on?")], [(tool_ok(), "End"), (tool_failed(), "Ask")], True),
    ([CallTool(calc)], [(tool_ok(), "End")], False),
    ([CallTool(calc)], [(tool_ok(), "End"), (tool_failed("other"), "Ask")], False),
    ([CallLLM()], [(tool_ok(), "End"), (tool_failed(), "Ask")], False),  # no tool result to test
])
def test_tool_ok_and_tool_failed_after_a_tool_cover_every_outcome(outputs, transitions, covered):
    flow = _flow(_ask(*transitions, outputs=outputs), visit_limits={"Ask": 3})
    assert ("no-default-transition" not in codes(flow)) is covered


# ---- turn-limit-too-small ----------------------------------------------------------------
def _chain(max_turns: int) -> Flow:
    states = [State(n, outputs=[CallLLM()], transitions=[(always(), nxt)])
              for n, nxt in (("A", "B"), ("B", "C"), ("C", "End"))]
    return _flow(*states, max_turns=max_turns)


def test_a_turn_limit_below_the_shortest_path_is_reported():
    assert found(_chain(2)) == [(None, "turn-limit-too-small")]
    assert "at least 3" in check_flow(_chain(2))[0].format("t")
    assert found(_chain(3)) == []


# ---- static-loop ------------------------------------------------------------------------
def test_a_self_loop_without_model_or_tool_calls_is_static():
    waiting = State("Wait", outputs=[Instruction("wait")], transitions=[(contains("go"), "End"), (always(), "Wait")])
    flow = _flow(waiting)
    assert found(flow) == [("Wait", "static-loop")]
    assert run(flow).exit_reason is ExitReason.TURN_LIMIT  # what the warning predicts
    calling = State("Wait", outputs=[Instruction("wait"), CallLLM()], transitions=waiting.transitions)
    assert found(_flow(calling)) == [("Wait", "unbounded-self-loop")]


def test_a_loop_through_instruction_states_is_static():
    a = State("A", outputs=[Instruction("a")], transitions=[(contains("done"), "End"), (always(), "B")])
    b = State("B", outputs=[Instruction("b")], transitions=[(always(), "A")])
    flow = _flow(a, b)
    assert found(flow) == [("A", "static-loop")]
    assert "['A', 'B']" in check_flow(flow)[0].message
    assert run(flow).exit_reason is ExitReason.TURN_LIMIT


def _visits_below_three(ctx) -> bool:
    return ctx.visits["A"] < 3


@pytest.mark.parametrize("a_outputs, a_transitions", [
    # a plain function may read more than the history (here: the visits)
    ([Instruction("a")], [(_visits_below_three, "B"), (always(), "End")]),
    # A without outputs sees the task first, then B's instruction: not the same history
    ([], [(contains("b"), "End"), (always(), "B")]),
])
def test_loops_that_may_change_are_not_static(a_outputs, a_transitions):
    a = State("A", outputs=a_outputs, transitions=a_transitions)
    b = State("B", outputs=[Instruction("b")], transitions=[(always(), "A")])
    assert "static-loop" not in codes(_flow(a, b))
    assert run(_flow(a, b)).exit_reason is ExitReason.FINAL


# ---- unbounded-self-loop and visit limits -----------------------------------------------------
def test_a_self_loop_without_visit_limit_is_noted():
    flow = _flow(_ask((contains("x"), "End"), (always(), "Ask")))
    assert [(d.severity, d.code) for d in check_flow(flow)] == [("info", "unbounded-self-loop")]
    assert found(flow.replace(visit_limits={"Ask": 3})) == []


def test_visit_limits_that_cannot_apply():
    flow = _flow(_ask((contains("x"), "End"), (always(), "Ask")), max_turns=5)
    assert found(flow.replace(visit_limits={"Ask": 3, "End": 1})) == [("End", "visit-limit-on-final")]
    # the initial state is entered at turns 0..5: six visits at most
    assert found(flow.replace(visit_limits={"Ask": 6})) == [("Ask", "visit-limit-never-binds")]
    assert found(flow.replace(visit_limits={"Ask": 5})) == []


@pytest.mark.parametrize("limit, reason", [(5, ExitReason.VISIT_LIMIT), (6, ExitReason.TURN_LIMIT)])
def test_the_visit_limit_bound_matches_the_engine(limit, reason):
    loop = State("Loop", outputs=[Instruction("again")], transitions=[(contains("stop"), "End"), (always(), "Loop")])
    assert run(_flow(loop, max_turns=5, visit_limits={"Loop": limit})).exit_reason is reason


# ---- every flow the project ships -----------------------------------------------------------
def _agent_flows(benchmark: str, replay: str) -> dict[str, Flow]:
    """The flows of ``benchmark``'s registered agents that are flows (oracles included)."""
    from statebound.bench.registry import benchmark_class, load_agents
    from statebound.contract.benchmark import Setup, Task
    from statebound.contract.converters import FlowAgent

    setup = Setup(options=benchmark_class(benchmark).Options(replay=replay), task=Task("1-0", "a task"), seed=0,
                  max_turns=10)
    agents = {name: spec.build(setup) for name, spec in load_agents(benchmark).items()}
    return {f"{benchmark} {name}": agent.flow for name, agent in agents.items() if isinstance(agent, FlowAgent)}


def _shipped(tmp_path: Path) -> dict[str, Flow]:
    from statebound.agents.alfworld.phases import build_phases
    from statebound.agents.alfworld.stateflow import build_stateflow
    from statebound.envs.alfworld import TASK_TYPES
    from statebound.envs.alfworld.goals import parse_goal
    from statebound.examples import EXAMPLES, load_example

    replay = tmp_path / "replay.jsonl"
    replay.write_text('{"task": "1-0", "actions": ["submit"]}\n')
    flows = {f"example {name}": load_example(name) for name in EXAMPLES}
    flows |= _agent_flows("intercode-sql", str(replay)) | _agent_flows("intercode-bash", str(replay))
    for goal in ("examine the book with the desklamp", "put two cellphone in sofa",
                 "clean some apple and put it in fridge", "heat some egg and put it in garbagecan",
                 "cool some lettuce and put it in countertop", "put a pen in drawer"):
        flow = build_phases(parse_goal(goal))
        flows[f"alfworld {flow.name}"] = flow
    for task_type in TASK_TYPES:  # StateFlow's machines as the authors run them
        flow = build_stateflow(task_type)
        flows[f"alfworld {flow.name}"] = flow
    return flows


# Our Bash output-end machine (and Rethink on it): Solve, Verify and Error branch on the execution's
# outcome (submit/output, error, empty), which step_outcome always sets to one of those four, so one
# rule always fires; the checks cannot see that a plain function's cases are exhaustive.
EXPECTED_WARNINGS = {
    f"intercode-bash {view}{variant}": [(s, "no-default-transition") for s in ("Solve", "Verify", "Error")]
    for view in ("stateflow", "sf-agent")
    for variant in ("-output-end", "-rethink")
}


def test_shipped_flows_have_no_unexpected_warnings(tmp_path):
    flows = _shipped(tmp_path)
    assert len(flows) >= 2 + 15 + 8 + 6 + 6  # examples, SQL, Bash, ALFWorld phases and authors' machines
    for label, flow in flows.items():
        warnings = [(d.state, d.code) for d in check_flow(flow) if d.severity == "warning"]
        assert warnings == EXPECTED_WARNINGS.get(label, []), label


# ---- the command ---------------------------------------------------------------------------
USER_FLOW = '''
from statebound.flow import CallLLM, Flow, State, always, contains

flow = Flow(name="mine", initial="Ask", states=[
    State("Ask", outputs=[CallLLM()], transitions=[(always(), "End"), (contains("x"), "Ask")]),
    State("End", final=True),
])
'''


def test_flow_check_command(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["flow", "check", "arithmetic", "--strict"])
    assert result.exit_code == 0 and result.output == "arithmetic: 0 warning(s), 0 info\n"
    path = tmp_path / "mine.py"
    path.write_text(USER_FLOW)
    result = runner.invoke(app, ["flow", "check", f"{path}:flow"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("""mine: Ask: warning: transition "contains 'x'" -> Ask comes after""")
    assert lines[0].endswith("[shadowed-transition]") and lines[-1] == "mine: 1 warning(s), 0 info"
    assert runner.invoke(app, ["flow", "check", f"{path}:flow", "--strict"]).exit_code == 1
    unknown = runner.invoke(app, ["flow", "check", "no-such-flow"])
    assert unknown.exit_code == 2
    assert "neither a bundled example" in " ".join(unknown.output.replace("│", " ").split())
