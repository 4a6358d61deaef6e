"""Action parsing: the environment's language and how agent replies become actions."""

from __future__ import annotations

import pytest

from statebound.agents.bash import action_from_reply, code_from_reply, execution_failed, plan_steps
from statebound.envs.base import StepResult
from statebound.envs.bash import format_execute, parse_action


@pytest.mark.parametrize(
    ("action", "kind", "command"),
    [
        ("submit", "submit", ""),
        ("  submit\n", "submit", ""),
        ("execute[ls -la /testbed]", "execute", "ls -la /testbed"),
        (
            "execute[find . -name '[a-z]*.txt']",
            "execute",
            "find . -name '[a-z]*.txt'",
        ),  # up to the last ]
        ("execute[]", "execute", ""),
        ("execute[echo a\necho b]", "execute", "echo a\necho b"),
        ("ls -la", "invalid", "ls -la"),
        ("submit now", "invalid", "submit now"),
    ],
)
def test_parse_action(action, kind, command):
    parsed = parse_action(action)
    assert (parsed.kind, parsed.command) == (kind, command)


def test_format_execute_round_trips():
    assert parse_action(format_execute("du -sh /workspace")).command == "du -sh /workspace"


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("Thought: list it\nAction: execute[ls /testbed]", "execute[ls /testbed]"),
        (" I will count.\nAction 3: execute[wc -l f.txt]", "execute[wc -l f.txt]"),
        ("Thought: done\nAction: submit", "submit"),
        ("Thought: the output answers it.\nAction 4: submit.", "submit"),
        ("execute[cat /testbed/recent.txt]", "execute[cat /testbed/recent.txt]"),
        ("I have no idea", "I have no idea"),
    ],
)
def test_action_from_reply(reply, action):
    assert action_from_reply(reply) == action


def test_a_reply_with_two_actions_runs_the_first_as_the_authors_code_does():
    action = action_from_reply("Thought: a\nAction: execute[ls]\nThought: b\nAction: execute[pwd]")
    assert action == "execute[ls]\nThought: b"  # split("Action: ")[1]: up to the next label
    assert parse_action(action).command == "ls"


def test_code_from_reply_takes_fenced_code_or_the_reply():
    assert code_from_reply("Here:\n```bash\nls  -la\n/testbed\n```") == "execute[ls -la /testbed]"
    assert code_from_reply("```\npwd\n```") == "execute[pwd]"
    assert code_from_reply("  du -sh /workspace ") == "execute[du -sh /workspace]"


def test_plan_steps_reads_numbered_items():
    plan = "Plan:\n1. Check that /testbed exists.\n2) Find the java files\n  3. Hash them\nDone."
    assert plan_steps(plan) == ["Check that /testbed exists.", "Find the java files", "Hash them"]


@pytest.mark.parametrize(
    ("observation", "ok", "failed"),
    [
        ("hello\n", True, False),
        ("", True, False),
        ("", False, True),  # non-zero exit status
        ("/bin/bash: line 1: xxd: command not found\n", True, True),  # a pipeline that exited 0
        ("cat: x: No such file or directory\n0\n", True, True),
        ("Command timed out", False, True),
        (
            "Error executing query: Your last `execute` action did not contain bash code",
            False,
            True,
        ),
    ],
)
def test_execution_failed(observation, ok, failed):
    assert execution_failed(StepResult(observation=observation, ok=ok)) is failed
