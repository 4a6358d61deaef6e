"""Each StateFlow machine's transitions, driven by scripted replies on a scripted world."""

import pytest
from alfworld_world import ROOM, ScriptedWorld

from statebound.agents.alfworld.phases import build_phases, read_action
from statebound.envs.alfworld.goals import parse_goal
from statebound.llm.testing import ScriptedLLM

SEEN = {
    "go to countertop 1": "On the countertop 1, you see a apple 1, a knife 1.",
    "go to desk 1": "On the desk 1, you see a pen 1, a desklamp 1.",
    "go to shelf 1": "On the shelf 1, you see a pen 2.",
}
REPLIES = {
    **SEEN,
    "take apple 1 from countertop 1": "You pick up the apple 1 from the countertop 1.",
    "take pen 1 from desk 1": "You pick up the pen 1 from the desk 1.",
    "take pen 2 from shelf 1": "You pick up the pen 2 from the shelf 1.",
    "go to sinkbasin 1": "On the sinkbasin 1, you see nothing.",
    "clean apple 1 with sinkbasin 1": "You clean the apple 1 using the sinkbasin 1.",
    "go to microwave 1": "The microwave 1 is closed.",
    "heat apple 1 with microwave 1": "You heat the apple 1 using the microwave 1.",
    "go to fridge 1": "The fridge 1 is open. In it, you see nothing.",
    "cool apple 1 with fridge 1": "You cool the apple 1 using the fridge 1.",
    "go to sofa 1": "On the sofa 1, you see a pillow 1.",
    "move apple 1 to sofa 1": "You put the apple 1 in/on the sofa 1.",
    "move pen 1 to sofa 1": "You put the pen 1 in/on the sofa 1.",
    "move pen 2 to sofa 1": "You put the pen 2 in/on the sofa 1.",
    "use desklamp 1": "You turn on the desklamp 1.",
}
PUT_APPLE = ["go to sofa 1", "put apple 1 in/on sofa 1"]
FIND_APPLE = ["go to desk 1", "go to countertop 1", "take apple 1 from countertop 1"]

CASES = {
    "put": ("put some apple on sofa", [*FIND_APPLE, *PUT_APPLE],
            ["Find", "Find", "Take", "Put", "Put", "End"]),
    "clean": ("clean some apple and put it in sofa",
              [*FIND_APPLE, "go to sinkbasin 1", "clean apple 1 with sinkbasin 1", *PUT_APPLE],
              ["Find", "Find", "Take", "Clean", "Clean", "Put", "Put", "End"]),
    "heat": ("put a hot apple in sofa",
             [*FIND_APPLE, "go to microwave 1", "heat apple 1 with microwave 1", *PUT_APPLE],
             ["Find", "Find", "Take", "Heat", "Heat", "Put", "Put", "End"]),
    "cool": ("cool some apple and put it in sofa",
             [*FIND_APPLE, "go to fridge 1", "cool apple 1 with fridge 1", *PUT_APPLE],
             ["Find", "Find", "Take", "Cool", "Cool", "Put", "Put", "End"]),
    "puttwo": ("put two pen in sofa",
               ["go to desk 1", "take pen 1 from desk 1", "go to sofa 1", "put pen 1 in/on sofa 1",
                "go to shelf 1", "take pen 2 from shelf 1", "go to sofa 1", "put pen 2 in/on sofa 1"],
               ["Find", "Take", "Put", "Put", "Find", "Take", "Put", "Put", "End"]),
    "examine": ("look at pen under the desklamp",
                ["go to desk 1", "take pen 1 from desk 1", "use desklamp 1"],
                ["Find", "Take", "UseLamp", "End"]),
}


def _world(sentence: str, winning: str) -> ScriptedWorld:
    goal = parse_goal(sentence)
    return ScriptedWorld(task=f"{ROOM}\nYour task is to: {sentence}.", task_type=goal.task_type,
                         replies=REPLIES, winning=winning)


@pytest.mark.parametrize("task_type", sorted(CASES))
async def test_machine_moves_on_observations(task_type):
    sentence, actions, expected = CASES[task_type]
    world = _world(sentence, winning=world_winning(actions))
    flow = build_phases(parse_goal(sentence))
    result = await flow.run(world.task, llm=ScriptedLLM(actions), deps=world)
    assert list(result.trajectory) == expected
    assert result.exit_state == "End" and world.won


def world_winning(actions: list[str]) -> str:
    last = actions[-1]
    return last.replace("put ", "move ").replace(" in/on ", " to ") if last.startswith("put ") else last


async def test_take_falls_back_to_find_when_the_agent_wanders_off():
    sentence = "put some apple on sofa"
    actions = ["go to countertop 1", "go to desk 1", "go to countertop 1", "take apple 1 from countertop 1", *PUT_APPLE]
    world = _world(sentence, winning="move apple 1 to sofa 1")
    result = await build_phases(parse_goal(sentence)).run(world.task, llm=ScriptedLLM(actions), deps=world)
    assert list(result.trajectory) == ["Find", "Take", "Find", "Take", "Put", "Put", "End"]


async def test_refused_actions_keep_the_state_and_the_step_limit_ends_the_run():
    sentence = "put some apple on sofa"
    world = _world(sentence, winning="never")
    world.max_steps = 3
    result = await build_phases(parse_goal(sentence), max_turns=3).run(
        world.task, llm=ScriptedLLM(["dance", "sing", "go to sofa 1"]), deps=world)
    assert list(result.trajectory) == ["Find", "Find", "Find", "End"]
    assert world.failed_actions == 2 and not world.won


async def test_state_instructions_stay_out_of_the_shared_history():
    sentence = "put some apple on sofa"
    world = _world(sentence, winning="move apple 1 to sofa 1")
    llm = ScriptedLLM([*FIND_APPLE, *PUT_APPLE])
    result = await build_phases(parse_goal(sentence)).run(world.task, llm=llm, deps=world)
    assert not any("Find a apple" in e.content for e in result.history)
    assert "Find a apple" in llm.requests[0].messages[0].content  # the Find agent's system message
    assert "Put it in/on the sofa" in llm.requests[-1].messages[0].content


def test_read_action_strips_labels():
    assert read_action("Action: go to desk 1.\nObservation: ...") == "go to desk 1"
    assert read_action("\n> take pen 1 from desk 1") == "take pen 1 from desk 1"
