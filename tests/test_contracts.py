"""One suite every environment and every registered benchmark passes (as the `transitions` library
runs its core suite against every variant); the model backends' suite is in
tests/llm/test_llm_contract.py.

An environment resets to a task text, answers any action with a StepResult (a bad action is a
failed step, never an exception), scores, and closes twice without harm; a benchmark's options
have defaults, its tasks are stable with unique ids, each agent builds for an episode, and grading
an episode in which the agent did nothing is a failure with no turns beyond the benchmark's own.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable, Iterator

import pytest

from statebound.bench.registry import benchmark_names, load_agents, load_benchmark
from statebound.contract.benchmark import Setup
from statebound.contract.trace import ExitReason, Trace
from statebound.envs.base import Environment, Score, StepResult

pytestmark = pytest.mark.integration

REAL_PARTS: dict[str, tuple[bool, str]] = {
    "intercode-bash": (shutil.which("bwrap") is not None, "needs bubblewrap"),
    "alfworld": (importlib.util.find_spec("alfworld") is not None, "needs the alfworld extra"),
}
BUNDLED = ("toy", "intercode-sql", "intercode-bash", "gsm8k", "hotpotqa", "alfworld")


def _needs(name: str) -> None:
    ok, why = REAL_PARTS.get(name, (True, ""))
    if not ok:
        pytest.skip(why)


@pytest.fixture(params=BUNDLED)
def benchmark_env(request: pytest.FixtureRequest) -> Iterator[tuple[str, Callable[[], Environment], str]]:
    """(name, a factory of fresh environments, the first task's id) of each bundled benchmark."""
    name = request.param
    _needs(name)
    loaded = load_benchmark(name)
    first = loaded.benchmark.tasks()[0].id
    yield name, lambda: loaded.benchmark.make_env(max_turns=loaded.benchmark.default_max_turns), first


def test_every_bundled_benchmark_is_in_the_suite() -> None:
    assert set(BUNDLED) <= set(benchmark_names())


def test_an_environment_resets_steps_scores_and_closes(benchmark_env) -> None:
    name, make, first = benchmark_env
    env = make()
    try:
        assert isinstance(env, Environment)
        text = env.reset(first)
        assert isinstance(text, str) and text.strip()
        result = env.step("@@ not an action @@")
        assert isinstance(result, StepResult) and not result.ok, name
        score = env.score()
        assert isinstance(score, Score) and 0.0 <= score.reward <= 1.0 and not score.success
        again = env.reset(first)  # a second episode on the same environment starts afresh
        assert again == text
    finally:
        env.close()
        env.close()  # closing twice is harmless


def test_a_benchmark_declares_stable_tasks_and_buildable_agents(benchmark_env) -> None:
    name, _, first = benchmark_env
    loaded = load_benchmark(name)
    tasks = loaded.benchmark.tasks()
    ids = [task.id for task in tasks]
    assert ids and len(set(ids)) == len(ids) and ids == [task.id for task in loaded.benchmark.tasks()]
    assert all(isinstance(task.question, str) and task.question for task in tasks)
    agents = load_agents(name)
    assert agents and all(spec.summary for spec in agents.values())
    setup = Setup(options=loaded.benchmark.options, task=tasks[0], seed=0, max_turns=3)
    for agent, spec in agents.items():
        if spec.check is not None:
            continue  # an agent that needs options of its own (a replay file)
        assert callable(spec.build(setup)), agent


def test_grading_an_episode_where_the_agent_did_nothing_is_a_failure(benchmark_env) -> None:
    name, make, first = benchmark_env
    loaded = load_benchmark(name)
    task = next(task for task in loaded.benchmark.tasks() if task.id == first)
    env = make()
    try:
        env.reset(first)
        grade = loaded.benchmark.grade(env, task, Trace(entries=(), exit=ExitReason.FINAL))
    finally:
        env.close()
    assert not grade.success and grade.reward < 1.0 and 0.0 <= grade.error_rate <= 1.0, name
