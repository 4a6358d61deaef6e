"""The real TextWorld engine on bundled games (needs the 'alfworld' extra)."""

import pytest

pytest.importorskip("alfworld")

from statebound.agents.alfworld.walkthrough import play_walkthrough
from statebound.bench.evaluate import run_task
from statebound.contract.benchmark import EpisodeLimits
from statebound.envs.alfworld import AlfworldEnv
from statebound.envs.base import Environment
from statebound.errors import DefinitionError
from statebound.exits import ExitReason
from statebound.llm.testing import ScriptedLLM

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def env():
    environment = AlfworldEnv()
    yield environment
    environment.close()


def test_walkthrough_wins_a_real_game(env):
    assert isinstance(env, Environment)
    env.reset("examine-000")
    outcome = play_walkthrough(env)
    assert outcome.won, outcome.cause
    assert outcome.trajectory[-1]["observation"].startswith("You turn on the desklamp")
    assert env.score().success and env.score().metrics["steps"] == outcome.steps


def test_put_correction_on_the_real_engine(env):
    task = env.reset("clean-060")  # put a clean pan in countertop; the pan is on stoveburner 3
    assert task.startswith("You are in the middle of a room.") and task.endswith("put a clean pan in countertop.")
    assert env.step("go to stoveburner 3").observation == "On the stoveburner 3, you see a pan 1."
    assert env.step("take pan 1 from stoveburner 3").ok
    env.step("go to countertop 1")
    env.correct_put = False
    refused = env.step("put pan 1 on countertop 1")
    assert (refused.ok, refused.observation) == (False, "Nothing happens.")
    env.correct_put = True
    accepted = env.step("put pan 1 on countertop 1")
    assert accepted.ok and accepted.observation == "You put the pan 1 in/on the countertop 1."
    metrics = env.score().metrics
    assert (metrics["put_corrections"], metrics["failed_actions"]) == (1, 1)
    env.correct_put = False


def test_admissible_commands_speak_the_prompts_put_and_follow_the_game(env):
    with pytest.raises(DefinitionError, match="admissible=True"):
        env.admissible_commands()
    listing = AlfworldEnv(admissible=True)
    try:
        listing.reset("clean-060")
        first = listing.admissible_commands()
        assert "go to stoveburner 3" in first and "help" not in first
        assert not any(c.startswith("take pan") for c in first)  # the pan is not in reach yet
        listing.step("go to stoveburner 3")
        assert "take pan 1 from stoveburner 3" in listing.admissible_commands()
        listing.step("take pan 1 from stoveburner 3")
        listing.step("go to countertop 1")
        held = listing.admissible_commands()
        assert "put pan 1 in/on countertop 1" in held and not any(c.startswith("move ") for c in held)
        assert listing.step("put pan 1 in/on countertop 1").ok  # what it lists, the engine accepts
    finally:
        listing.close()


async def test_one_scripted_stateact_step_on_the_real_engine():
    reply = ("goal: examine the alarmclock with the desklamp\ncurrent location: starting location\n"
             "current inventory: None\nthought: None\naction: go to desk 2")
    result = await run_task("alfworld", "stateact", "examine-000", llm=ScriptedLLM([reply]),
                            limits=EpisodeLimits(max_turns=1))
    assert (result.turns, result.success, result.exit_reason) == (1, False, ExitReason.TURN_LIMIT)
    assert result.meta["task_type"] == "examine" and result.meta["state_accuracy"] == 1.0
    assert result.trajectory[-1]["content"] == "On the desk 2, you see a alarmclock 1."


def test_episodes_in_parallel_threads_do_not_corrupt_the_engine():
    """The harness runs environments in worker threads; TextWorld's PDDL parser is not thread-safe."""
    from concurrent.futures import ThreadPoolExecutor

    def play(task_id):
        environment = AlfworldEnv()
        try:
            environment.reset(task_id)
            return play_walkthrough(environment).won
        finally:
            environment.close()

    with ThreadPoolExecutor(max_workers=3) as pool:
        assert list(pool.map(play, ["examine-000", "clean-060", "heat-100"])) == [True, True, True]
