"""ALFChat (the StateFlow blog's 2- and 3-agent baselines) as a group chat, on scripted replies and a
real game."""

from __future__ import annotations

import re

import pytest
from alfworld_world import ROOM, AdmissibleWorld

from statebound.agents.alfworld.alfchat import OPENING, build_alfchat
from statebound.agents.alfworld.prompts import load_prompts
from statebound.bench.evaluate import run_task
from statebound.envs.alfworld import find_game
from statebound.llm.testing import FunctionLLM, ScriptedLLM

PROMPTS = load_prompts("alfchat_alfworld.json")
REPLIES = {
    "go to countertop 1": "On the countertop 1, you see a apple 1.",
    "take apple 1 from countertop 1": "You pick up the apple 1 from the countertop 1.",
    "go to sofa 1": "On the sofa 1, you see a pillow 1.",
    "move apple 1 to sofa 1": "You put the apple 1 in/on the sofa 1.",
}
TASK = f"{ROOM}\nYour task is to: put some apple on sofa."


def _world() -> AdmissibleWorld:
    return AdmissibleWorld(task=TASK, task_type="put", replies=dict(REPLIES), winning="move apple 1 to sofa 1")


async def _chat(agents, replies, world=None):
    world = world or _world()
    llm = ScriptedLLM(replies)
    result = await build_alfchat("put", agents=agents).run(OPENING + world.task, llm=llm, deps=world)
    return result, llm, world


async def test_two_agents_play_in_turns_until_the_game_says_terminate():
    replies = ["THOUGHT: find the apple.\nACTION: go to countertop 1", "ACTION: take apple 1 from countertop 1",
               "ACTION: Go to sofa 1.", "ACTION: put apple 1 in/on sofa 1"]
    trace, llm, world = await _chat(2, replies)
    assert world.won and len(llm.requests) == 4  # the assistant's TERMINATE costs no call
    assert [(e.name, e.content) for e in trace.history][-1] == ("alfworld", "Task success, now reply TERMINATE\n")
    assert [e.role for e in trace.events if e.kind == "speaker_selected"][:4] == ["assistant", "alfworld"] * 2
    first, last = llm.requests[0].messages, llm.requests[-1].messages
    assert first[0].content == "You are a helpful assistant."
    assert first[1].role == "user" and first[1].content == PROMPTS["base"] + PROMPTS["examples"]["put_1"][0]
    assert first[-1].content == f"Your task now begins. {TASK}"
    # the observation comes back bare; the reply is kept as written
    assert [(m.role, m.content) for m in last[-2:]] == [("assistant", "ACTION: Go to sofa 1."),
                                                        ("user", "On the sofa 1, you see a pillow 1.")]


@pytest.mark.parametrize("replies", [["ACTION: xyzzy"] * 5, ["ACTION: go to countertop 1"] * 5])
async def test_two_agents_give_up_after_four_failures_or_repeats(replies):
    trace, llm, world = await _chat(2, replies)
    assert len(world.actions) == 4 and not world.won
    assert trace.history[-1].content == "Task failed, now reply TERMINATE."


@pytest.mark.parametrize("agents", [2, 3])
async def test_a_reply_containing_terminate_ends_the_chat_without_a_command(agents):
    replies = ["ACTION: go to countertop 1", "THOUGHT: this seems insolvable. terminate", "ACTION: go to sofa 1"]
    trace, llm, world = await _chat(agents, replies)
    assert world.actions == ["go to countertop 1"] and not world.won and len(llm.requests) == 2
    assert trace.history[-1].content == "TERMINATE"


def test_the_hints_are_the_stateflow_repositorys():
    # ALFWorld/src/tasks/task_desc.json of yiranwu0/StateFlow (AutoGen's put hint has no "safe")
    assert "shelf/drawer/cabinet/desk/safe." in PROMPTS["hints"]["put"]
    assert PROMPTS["hints"]["puttwo"].endswith("You can take only **one** object at a time. ")
    assert "Do not take unnecessary things with you." in PROMPTS["hints"]["examine"]


async def test_three_agents_ground_the_opening_and_a_stuck_run():
    replies = ["ACTION: go to countertop 1", "ACTION: go to sofa 1"] * 2 + ["THOUGHT: take it. ACTION: take apple 1 from countertop 1"]
    world = _world()
    world.replies["go to countertop 1"] = "On the countertop 1, you see nothing."
    trace, llm, world = await _chat(3, replies, world)
    hint = PROMPTS["hints"]["put"]
    first = llm.requests[0].messages
    assert first[0].content == "You are a helpful assistant" and first[-1].content == f"Your task now begins. {TASK}{hint}"
    last = llm.requests[4].messages
    # four commands, two different ones: the grounding agent's hint closes the observation
    assert last[-1].content == "On the sofa 1, you see a pillow 1." + hint
    # the assistant's replies are kept with the command that was sent
    assert last[-2].content == "ACTION: go to sofa 1" and last[-4].content == "ACTION: go to countertop 1"
    speakers = [e.name for e in trace.history if e.source == "tool"]
    assert speakers[:6] == ["grounding", "alfworld", "alfworld", "alfworld", "alfworld", "grounding"]


async def test_three_agents_lose_at_the_tenth_hint():
    trace, llm, world = await _chat(3, ["ACTION: go to countertop 1"] * 20)
    # from the fourth action on every action is stuck: hints 1-9 at actions 4-12, the tenth loses the game
    assert len(world.actions) == 13 and trace.history[-1].content == "Task failed, now reply TERMINATE.\n"


@pytest.mark.integration
@pytest.mark.parametrize("agents", [2, 3])
async def test_following_the_walkthrough_wins_a_real_game(agents):
    walkthrough = [re.sub(r"^move (.+?) to (.+)$", r"put \1 in/on \2", " ".join(step.split()))
                   for step in find_game("put-018", "valid_unseen").walkthrough()]
    replies = iter(f"THOUGHT: next.\nACTION: {step}" for step in walkthrough)
    result = await run_task("alfworld", f"alfchat-{agents}agents", "put-018", llm=FunctionLLM(lambda request: next(replies)))
    assert result.success and result.turns == len(walkthrough)
