"""A command no shell can take (issue #51): a NUL byte, or text that is not UTF-8 (a lone
surrogate, as a server's JSON escapes can make), is an invalid action whose observation says why,
never a crash; the episode goes on, and its trajectory is stored and shown whatever it holds."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from bash_doubles import needs_sandbox
from typer.testing import CliRunner

from statebound.bench.evaluate import run_task
from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.registry import load_benchmark
from statebound.bench.store import RunStore
from statebound.cli.app import app
from statebound.envs.bash import BashEnv
from statebound.llm.testing import ScriptedLLM

pytestmark = [pytest.mark.integration, needs_sandbox]

NUL, SURROGATE = "echo a\x00b", "echo \ud800"


def test_an_unrunnable_command_is_an_invalid_action_and_the_episode_goes_on() -> None:
    env = BashEnv()
    try:
        env.reset("1-0")
        for command, said in ((NUL, "contains a NUL byte"), (SURROGATE, "is not text a shell can take")):
            step = env.step(f"execute[{command}]")
            assert not step.ok and said in step.observation and "nothing ran" in step.observation
            assert step.info == {"executed": False}
        assert env.tally.invalid == 2 and env.tally.executed == 0 and env.turns == 2
        assert env.step("execute[echo fine]").observation.strip() == "fine"  # the sandbox is still there
    finally:
        env.close()


def test_the_episode_is_stored_and_shown_whatever_its_actions_held(tmp_path: Path) -> None:
    loaded = load_benchmark("intercode-bash", {})
    replies = [f"Thought: try\nAction: execute[{NUL}]", f"Thought: again\nAction: execute[{SURROGATE}]",
               "Thought: done\nAction: submit"]
    result = asyncio.run(run_task(loaded, "react", "1-0", llm=ScriptedLLM(replies, model="scripted")))
    assert result.error is None and result.meta["invalid_actions"] == 2
    run = tmp_path / "run"
    config = RunConfig(benchmark="intercode-bash", agents=("react",), models=(ModelSpec("scripted"),), task_ids=("1-0",))
    with RunStore(run) as store:
        store.start(config, resume=False)
        store.save(result, benchmark="intercode-bash", position=0)
    with RunStore(run, read_only=True) as store:
        (stored,) = store.episodes(task="1-0")
    contents = " ".join(item["content"] for item in stored.trajectory)
    assert "echo a\x00b" in contents and "echo \\ud800" in contents  # kept; the surrogate as its escape
    shown = CliRunner().invoke(app, ["show", str(run), "--task", "1-0"])
    assert shown.exit_code == 0, shown.output
    assert "contains a NUL byte" in shown.output and "echo a\\x00b" in shown.output
