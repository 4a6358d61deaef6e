"""StateFlow's Bash machine as the authors run it (``InterCode/experiments/flow_bash.py``), state by
state on scripted replies, and on the real sandbox."""

from __future__ import annotations

import asyncio

import pytest
from bash_doubles import FakeBashEnv, needs_sandbox

from statebound.agents.bash import build_stateflow, prompts
from statebound.agents.bash.tools import authors_failed
from statebound.bench.evaluate import run_task
from statebound.bench.registry import load_benchmark
from statebound.contract.benchmark import EpisodeLimits
from statebound.envs.base import StepResult
from statebound.envs.bash.actions import INVALID_ACTION_OBSERVATION
from statebound.flow import ExitReason
from statebound.llm.testing import ScriptedLLM

QUESTION = "Question: Count the lines of /testbed/recent.txt"
MISSING = ("/bin/bash: line 1: xxd: command not found", False)
OUTPUT = ("3 /testbed/recent.txt", True)
NOTHING = ("", True)
GREP_MISS = ("", False)  # grep found nothing: exit status 1, no error string
NO_FILE = ("ls: cannot access '/nope': No such file or directory", False)
ERROR_TEXT_EXIT_ZERO = ("xxd: command not found", True)
INVALID = (INVALID_ACTION_OBSERVATION, False)


def _act(i: int) -> str:
    return f"Thought: step {i}\nAction: execute[cmd{i}]"


def _run(replies, results, *, view="stateflow", max_turns=10):
    env = FakeBashEnv(results)
    llm = ScriptedLLM(replies)
    result = build_stateflow(view=view, max_turns=max_turns).run_sync(QUESTION, llm=llm, deps=env)
    return result, env, llm


# Each row: the environment's answers in order, then the states they were sent from: every action
# is one transition of the table (Solve/Verify/Error x error/ran/submit).
WALKS = {
    "solve-error": ([MISSING], ["Solve", "Error"]),
    "solve-output": ([OUTPUT], ["Solve", "Verify"]),
    "solve-nothing": ([NOTHING], ["Solve", "Verify"]),
    "solve-grep-miss-is-no-error": ([GREP_MISS], ["Solve", "Verify"]),
    "solve-unparsable": ([INVALID], ["Solve", "Verify"]),
    "error-text-with-exit-zero": ([ERROR_TEXT_EXIT_ZERO], ["Solve", "Error"]),
    "error-error-ran": ([MISSING, NO_FILE, OUTPUT], ["Solve", "Error", "Error", "Verify"]),
    "verify-ran-error": ([OUTPUT, NOTHING, MISSING, OUTPUT], ["Solve", "Verify", "Verify", "Error", "Verify"]),
}


@pytest.mark.parametrize("view", ["stateflow", "sf-agent"])
@pytest.mark.parametrize("walk", WALKS, ids=list(WALKS))
def test_each_outcome_goes_where_the_authors_machine_sends_it(view, walk):
    results, states = WALKS[walk]
    replies = [_act(i) for i in range(len(results))] + ["Thought: done\nAction: submit"]
    result, env, _ = _run(replies, results, view=view)
    acted = [e.state for e in result.history if e.source == "tool"]
    assert acted == states  # the last state sent the submit
    assert result.trajectory == ("Init", *states, "End") and env.actions[-1] == "submit"
    assert result.exit_reason is ExitReason.FINAL


@pytest.mark.parametrize("state_results", [[], [MISSING]], ids=["solve", "error"])
def test_submit_ends_the_run_from_solve_and_error(state_results):
    replies = [_act(i) for i in range(len(state_results))] + ["Action: submit"]
    result, _, _ = _run(replies, state_results)
    assert result.trajectory[-1] == "End" and result.exit_state == "End"


def test_failure_is_decided_by_the_authors_error_strings_only():
    assert authors_failed(StepResult("grep: /x: No such file or directory", ok=False))
    assert authors_failed(StepResult("bash: syntax error near unexpected token", ok=True))
    assert not authors_failed(StepResult("", ok=False))  # exit status 1 alone
    assert not authors_failed(StepResult(INVALID_ACTION_OBSERVATION, ok=False))


def test_stateflow_keeps_the_authors_prompts_in_the_history():
    result, _, llm = _run([_act(0), _act(1), "Action: submit"], [MISSING, OUTPUT])
    instructions = [e.content for e in result.history if e.source == "instruction"]
    assert instructions == [prompts.SOLVE, prompts.ERROR, prompts.VERIFY]
    first = llm.requests[0].messages
    assert first[0].content == prompts.SYSTEM and first[1].content.startswith(QUESTION)
    assert "submit" in prompts.VERIFY and "submit" not in prompts.SOLVE


def test_the_authors_examples_keep_their_unformatted_doubled_braces():
    # flow_bash.py's prompts are never passed through str.format: the model read "{{}}"
    assert "awk '{{$1=$1;print}}'" in prompts.SOLVE and "-exec cat {{}} + | wc -l" in prompts.SOLVE
    assert "-exec md5sum {{}} + | sort | uniq -D -w 32 | awk '{{print $1}}'" in prompts.VERIFY
    assert "{{" not in prompts.ERROR and "{{" not in prompts.PAPER_SOLVE  # Table 2 prints single braces
    assert "-exec md5sum {} + | sort" in prompts.PAPER_SOLVE


def test_sf_agent_sends_one_message_like_the_authors_prompt_assistant():
    result, _, llm = _run([_act(0), "Action: submit"], [OUTPUT], view="sf-agent")
    assert not [e for e in result.history if e.source == "instruction"]
    system, user = llm.requests[1].messages  # Verify's request
    assert system.content == prompts.SYSTEM
    assert user.content == (prompts.VERIFY + "\n\nHere is the question and current progress:\n" + QUESTION
                            + "\n" + _act(0) + "\nObservation: 3 /testbed/recent.txt")


def test_ten_actions_including_submit_then_the_runner_submits():
    replies = [_act(i) for i in range(12)]
    result, env, _ = _run(replies, [OUTPUT] * 12)
    assert len(env.actions) == 10 and result.exit_reason is ExitReason.TURN_LIMIT


@pytest.mark.integration
@needs_sandbox
def test_on_the_sandbox_a_grep_that_finds_nothing_goes_to_verify():
    replies = ["Thought: search\nAction: execute[grep -r nosuchword /workspace]",
               "Thought: nothing there\nAction: submit"]
    result = asyncio.run(run_task(load_benchmark("intercode-bash"), "stateflow", "3-59", llm=ScriptedLLM(replies),
                                  limits=EpisodeLimits(max_turns=10)))
    tool_states = [(e["state"], e.get("outcome")) for e in result.trajectory if e["role"] == "tool"]
    assert tool_states == [("Solve", "empty"), ("Verify", "submit")]
    assert result.trajectory[0]["content"].startswith("Question: ")
    # grep exited 1: not an error for the machine, a failed command in Table 1's error rate
    assert result.turns == 2 and result.error_rate == 0.5 and result.exit_state == "End"
