"""Our Bash extensions (output-end, Rethink) and the baselines, driven by the scripted LLM and a
scripted environment; StateFlow's own machine is in test_bash_stateflow_machine.py."""

from __future__ import annotations

from bash_doubles import FakeBashEnv

from statebound.agents.bash import build_output_end, build_plan_solve, build_react, prompts
from statebound.flow import ExitReason
from statebound.llm.testing import ScriptedLLM


def _run(flow, replies, results):
    env = FakeBashEnv(results)
    llm = ScriptedLLM(replies)
    result = flow.run_sync("Count the lines of /testbed/recent.txt", llm=llm, deps=env)
    return result, env, llm


def test_output_end_output_goes_to_end():
    result, env, _ = _run(
        build_output_end(),
        ["Thought: count\nAction: execute[wc -l /testbed/recent.txt]"],
        [("3 /testbed/recent.txt\n", True)],
    )
    assert result.trajectory == ("Init", "Solve", "End")
    assert result.exit_reason is ExitReason.FINAL
    assert env.actions == ["execute[wc -l /testbed/recent.txt]"]


def test_output_end_failure_goes_to_error_then_empty_output_to_verify():
    replies = [
        "Thought: hexdump\nAction: execute[xxd /testbed/recent.txt]",
        "Thought: use od\nAction: execute[touch /testbed/x]",
        "Thought: check\nAction: execute[ls /testbed]",
    ]
    results = [("/bin/bash: line 1: xxd: command not found\n", False), ("", True), ("x\n", True)]
    result, _, llm = _run(build_output_end(), replies, results)
    assert result.trajectory == ("Init", "Solve", "Error", "Verify", "End")
    # each state's instruction was sent, and StateFlow keeps them in the shared history
    instructions = [e.content for e in result.history if e.source == "instruction"]
    assert instructions == [prompts.PAPER_SOLVE, prompts.PAPER_ERROR, prompts.PAPER_VERIFY]
    assert llm.requests[0].messages[0].content == prompts.PAPER_SYSTEM
    assert prompts.PAPER_SOLVE in llm.requests[2].messages[1].content


def test_output_end_error_string_with_exit_zero_still_goes_to_error():
    replies = ["Action: execute[xxd f | head]", "Action: execute[od f]"]
    result, _, _ = _run(
        build_output_end(), replies, [("xxd: command not found\n", True), ("0000\n", True)]
    )
    assert result.trajectory == ("Init", "Solve", "Error", "End")


def test_output_end_submit_ends_and_invalid_action_is_an_error():
    replies = ["I think we should list files", "Thought: fine\nAction: submit"]
    env = FakeBashEnv(
        [("Error executing query: Your last `execute` action did not contain bash code", False)]
    )
    result = build_output_end().run_sync("task", llm=ScriptedLLM(replies), deps=env)
    assert result.trajectory == ("Init", "Solve", "Error", "End")
    assert env.actions == ["I think we should list files", "submit"]


def test_output_end_stops_after_ten_interactions():
    replies = [f"Action: execute[bad{i}]" for i in range(12)]
    results = [("/bin/bash: line 1: bad: command not found", False)] * 12
    result, env, _ = _run(build_output_end(), replies, results)
    assert len(env.actions) == 10
    assert result.exit_reason is ExitReason.TURN_LIMIT


def test_sf_agent_keeps_instructions_out_of_the_history():
    replies = ["Action: execute[xxd f]", "Action: execute[od f]"]
    result, _, llm = _run(
        build_output_end(view="sf-agent"), replies, [("xxd: command not found", False), ("00", True)]
    )
    assert result.trajectory == ("Init", "Solve", "Error", "End")
    assert not [e for e in result.history if e.source == "instruction"]
    solve_system, error_system = (
        llm.requests[0].messages[0].content,
        llm.requests[1].messages[0].content,
    )
    assert prompts.PAPER_SOLVE in solve_system and prompts.PAPER_ERROR not in solve_system
    assert prompts.PAPER_ERROR in error_system and prompts.PAPER_SOLVE not in error_system


def test_rethink_follows_a_failed_command_written_again():
    replies = [
        "Thought: hexdump\nAction: execute[xxd f]",
        "Thought: list\nAction: execute[ls /nowhere]",
        "Thought: try again\nAction: execute[xxd f]",
        "Thought: try again\nAction: execute[xxd f]",  # same command twice in a row
        "Thought: use od\nAction: execute[od f]",
    ]
    results = [("xxd: command not found\nmore", False), ("", True), ("xxd: command not found", False),
               ("xxd: command not found", False), ("0000", True)]
    result, env, llm = _run(build_output_end(rethink=True), replies, results)
    assert result.trajectory == ("Init", "Solve", "Error", "Verify", "Error", "Rethink", "End")
    assert env.actions[-1] == "execute[od f]"
    # Rethink sends no history: the question and the distinct failed commands, latest use last
    system, user = llm.requests[-1].messages
    assert system.content == prompts.PAPER_SYSTEM
    assert user.content == prompts.RETHINK.format(
        question="Count the lines of /testbed/recent.txt",
        tried="- execute[ls /nowhere] (it printed: nothing)\n- execute[xxd f] (it printed: xxd: command not found)",
    ) + prompts.PAPER_SOLVE
    assert [(r.temperature, r.seed) for r in llm.requests] == [(0.0, None)] * 4 + [(0.7, 0)]
    stored = [e.content for e in result.history if e.source == "instruction"]
    assert stored[-1] == user.content  # stored too, so trajectories show what Rethink sent


def test_rethink_stays_until_a_result_and_draws_a_new_sample_on_each_visit():
    replies = ["Action: execute[xxd f]"] * 3 + ["Action: execute[touch x]", "Action: submit"]
    results = [("xxd: command not found", False)] * 3 + [("", True)]  # an error, then no output
    result, _, llm = _run(build_output_end(rethink=True), replies, results)
    assert result.trajectory == ("Init", "Solve", "Error", "Rethink", "Rethink", "Rethink", "End")
    assert [r.seed for r in llm.requests[2:]] == [0, 1, 2]  # seed + visit - 1


def test_rethink_is_not_entered_for_a_new_command_or_a_repeat_that_prints():
    replies = ["Action: execute[xxd f]", "Action: execute[od f]", "Action: execute[od f]"]
    results = [("xxd: command not found", False), ("", True), ("0000", True)]
    result, _, _ = _run(build_output_end(rethink=True), replies, results)
    assert result.trajectory == ("Init", "Solve", "Error", "Verify", "End")


def test_rethink_off_keeps_the_paper_machine_going_round():
    replies = ["Action: execute[xxd f]"] * 3 + ["Action: submit"]
    results = [("xxd: command not found", False)] * 3
    paper, _, _ = _run(build_output_end(), replies, results)
    assert paper.trajectory == ("Init", "Solve", "Error", "Error", "Error", "End")
    extended, env, _ = _run(build_output_end(view="sf-agent", rethink=True), replies[1:], results)
    assert extended.trajectory == ("Init", "Solve", "Error", "Rethink", "End")
    assert env.actions == ["execute[xxd f]", "execute[xxd f]", "submit"]
    # sf-agent stores no state instruction, but Rethink's prompt is stored in both views
    assert [e.state for e in extended.history if e.source == "instruction"] == ["Rethink"]


def test_react_numbers_turns_and_submits():
    replies = [
        " I list the folder.\nAction 1: execute[ls /testbed]",
        " That answers it.\nAction 2: submit",
    ]
    result, env, llm = _run(build_react(), replies, [("recent.txt\n", True)])
    assert env.actions == ["execute[ls /testbed]", "submit"]
    assert result.exit_state == "End"
    second_prompt = llm.requests[1].messages[-1].content
    assert second_prompt.startswith(prompts.REACT_INTRO + prompts.REACT_DEMOS)
    assert second_prompt.endswith(
        "Action 1: execute[ls /testbed]\nObservation 1: recent.txt\n\nThought 2:"
    )


def test_react_turn_limit():
    replies = [f" try\nAction {i}: execute[ls]" for i in range(1, 6)]
    result, env, _ = _run(build_react(max_turns=3), replies, [("a", True)] * 5)
    assert len(env.actions) == 3 and result.exit_reason is ExitReason.TURN_LIMIT


def test_plan_solve_runs_one_command_per_step():
    replies = [
        "1. List the folder\n2. Count the lines",
        "```bash\nls /testbed\n```",
        "```bash\nwc -l /testbed/recent.txt\n```",
    ]
    result, env, llm = _run(build_plan_solve(), replies, [("recent.txt", True), ("3", True)])
    assert env.actions == ["execute[ls /testbed]", "execute[wc -l /testbed/recent.txt]"]
    assert result.trajectory == ("Plan", "Solve", "Solve", "End")
    assert llm.requests[2].messages[-1].content == "Observation: recent.txt\nStep: Count the lines"


def test_rethink_lists_at_most_the_latest_five_failed_commands():
    from statebound.agents.bash.rethink import TRIED_SHOWN

    replies = [f"Action: execute[bad{i}]" for i in range(7)] + ["Action: execute[bad6]", "Action: submit"]
    results = [(f"bad{i}: command not found", False) for i in range(7)] + [("bad6: command not found", False)]
    result, _, llm = _run(build_output_end(rethink=True), replies, results)
    assert result.trajectory[-2:] == ("Rethink", "End")
    listed = llm.requests[-1].messages[1].content.split("run them again:\n")[1].split("\n## ")[0]
    shown = range(7 - TRIED_SHOWN, 7)  # the latest distinct ones, oldest first
    assert listed.splitlines() == [f"- execute[bad{i}] (it printed: bad{i}: command not found)" for i in shown]
