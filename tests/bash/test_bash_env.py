"""The environment on the real sandbox: episodes, working directory, observations and reward."""

from __future__ import annotations

import shutil

import pytest
from bash_doubles import needs_sandbox

from statebound.benchmarks.intercode_bash import BashOptions, InterCodeBash
from statebound.contract.benchmark import Task
from statebound.envs.base import Environment
from statebound.envs.bash import BashEnv, Sandbox, get_task, load_tasks
from statebound.envs.bash import sandbox as sandbox_module
from statebound.envs.bash.actions import INVALID_ACTION_OBSERVATION
from statebound.errors import DefinitionError, EnvironmentUnavailable

pytestmark = [pytest.mark.integration, needs_sandbox]


@pytest.fixture
def env():
    environment = BashEnv()
    yield environment
    environment.close()


def test_tasks_cover_four_file_systems():
    tasks = load_tasks()
    assert len(tasks) == 200
    assert (tasks[0].id, tasks[-1].id) == ("1-0", "4-26")
    assert [sum(t.fs == fs for t in tasks) for fs in (1, 2, 3, 4)] == [60, 53, 60, 27]
    with pytest.raises(DefinitionError, match="4-26"):
        get_task("5-0")


def test_env_implements_the_protocol(env):
    assert isinstance(env, Environment)
    with pytest.raises(DefinitionError, match="reset"):
        env.step("execute[ls]")


def test_testbed_is_presented_at_root_and_cd_persists(env):
    assert env.reset("1-0") == get_task("1-0").query
    assert "testbed" in env.step("execute[ls /]").observation
    assert env.step("execute[cd /testbed/dir1]").ok
    assert env.step("execute[pwd]").observation == "/testbed/dir1\n"
    assert env.step("execute[cd .. && pwd]").observation == "/testbed\n"
    assert env.step("execute[ls]").observation.startswith("FooBar.html\n")


def test_errors_observations_and_error_rate(env):
    env.reset("1-0")
    failed = env.step("execute[nosuchtool /testbed/textfile7.txt]")
    assert not failed.ok and failed.info["exit_code"] == 127
    assert (
        failed.observation == "/bin/bash: line 1: nosuchtool: command not found\n"
    )  # upstream's wording
    invalid = env.step("list the files please")
    assert (invalid.observation, invalid.ok, invalid.info["executed"]) == (
        INVALID_ACTION_OBSERVATION,
        False,
        False,
    )
    long = env.step("execute[seq 1 1000]")
    assert long.ok and len(long.observation) == 350  # what the model sees is capped ...
    assert env.last_output == "".join(
        f"{i}\n" for i in range(1, 1001)
    )  # ... the scored output is not
    assert (
        env.error_rate == 0.5
    )  # two executed commands, one failed; the invalid action is not executed
    assert env.turns == 3  # the invalid action is a turn
    env.submit_at_limit()  # the runner's submit: no turn, but in the error rate (Table 1)
    assert (env.turns, env.error_rate, env.submitted) == (3, 1 / 3, True)
    env.reset("1-0")
    env.step("submit")  # the agent's own submit is a turn
    assert (env.turns, env.error_rate) == (1, 0.0)


def test_gold_answer_scores_one_and_wrong_answer_less(env):
    env.reset("1-0")
    env.step(f"execute[{get_task('1-0').gold}]")
    assert env.step("submit").done
    score = env.score()
    assert (score.reward, score.success) == (1.0, True)
    env.reset("1-0")
    env.step("execute[ls /testbed]")
    score, parts = env.grade()
    assert not score.success and parts.p1 == parts.p2 == 0.33 and parts.p3 < 0.33


def test_reward_follows_file_system_changes(env):
    task = get_task("3-59")
    assert task.gold == "ln /workspace/dir1/terminate.txt /workspace/test"
    env.reset(task.id)
    _, parts = env.grade()  # nothing done: the gold's change is missing, the task text is scored
    assert parts.missing and parts.p1 == 0.05
    env.step(f"execute[{task.gold}]")
    env.step("execute[touch /workspace/extra.txt]")
    _, parts = env.grade()
    assert parts.extra == (("workspace/extra.txt", "??"),) and parts.p1 == 0.05


def test_the_score_says_whether_doing_nothing_would_already_succeed(env):
    # 2-23's gold removes files named "temp" that do not exist: it changes and prints nothing
    assert get_task("2-23").gold == 'find /system -name "temp" -type f -delete'
    env.reset("2-23")
    env.step("execute[true]")
    nothing = env.score()
    assert nothing.success and nothing.metrics["gold_informative"] == 0.0
    env.reset("3-59")  # its gold makes a hard link: doing nothing misses it
    env.step("execute[true]")
    assert not env.score().success and env.score().metrics["gold_informative"] == 1.0
    benchmark = InterCodeBash(BashOptions())
    for task_id, informative in (("2-23", False), ("3-59", True)):
        env.reset(task_id)
        env.step("execute[true]")
        meta = benchmark.grade(env, Task(task_id, get_task(task_id).query), trace=None).meta  # type: ignore[arg-type]
        assert ("informative_success" in meta) is informative  # SR % (informative) counts 3-59 only


def test_missing_bubblewrap_is_a_clear_error(monkeypatch):
    sandbox_module.check_sandbox.cache_clear()
    sandbox_module._tool.cache_clear()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    try:
        with pytest.raises(EnvironmentUnavailable, match="apt-get install bubblewrap"):
            BashEnv().reset("1-0")
    finally:
        monkeypatch.undo()
        sandbox_module.check_sandbox.cache_clear()
        sandbox_module._tool.cache_clear()


def test_sandbox_runs_as_root_inside_with_a_private_root():
    with Sandbox(fs=4) as box:
        assert box.run("whoami; hostname").output == "root\nsandbox\n"
        assert box.run("ls /").output.split() == [
            "bin",
            "dev",
            "etc",
            "lib",
            "lib64",
            "proc",
            "root",
            "sbin",
            "tmp",
            "usr",
        ]
        root = box.root
    assert not root.exists()
