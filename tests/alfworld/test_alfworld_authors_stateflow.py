"""StateFlow's ALFWorld machine as the authors' code runs it: the reply-to-command matching, every
state's transitions on scripted replies, and a real game won by following its walkthrough."""

from __future__ import annotations

import re

import pytest
from alfworld_world import ROOM, AdmissibleWorld

from statebound.agents.alfworld import stateflow_prompts as prompts
from statebound.agents.alfworld.matching import closest_command, sentence_bleu
from statebound.agents.alfworld.stateflow import AuthorsStateFlow, build_stateflow
from statebound.bench.evaluate import run_task
from statebound.envs.alfworld import find_game
from statebound.envs.alfworld.goals import parse_goal
from statebound.llm.testing import FunctionLLM, ScriptedLLM

# NLTK 3.10.4's sentence_bleu(..., smoothing_function=SmoothingFunction().method4) on these pairs
NLTK = [
    ("go to cabinet 1", "go to cabinet 2", 0.43146827293898643),
    ("take apple 1 from table 1", "take apple", 0.029961687346935995),
    ("go to fridge 1", "open fridge 1", 0.15174681566793558),
    ("put apple 1 in/on sidetable 1", "put apple 1 on sidetable 1", 0.293945703509473),
    ("inventory", "go to the kitchen", 0.0),
    ("examine desk 1", "use desklamp 1", 0.07249749990681824),
    ("go to countertop 3", "go to countertop", 0.41252121275142684),
    ("use desklamp 1", "use", 0.1353352832366127),
    ("look", "look", 1.0),
]


@pytest.mark.parametrize(("reference", "hypothesis", "expected"), NLTK)
def test_sentence_bleu_is_nltks_method_4(reference, hypothesis, expected):
    assert sentence_bleu(reference.split(), hypothesis.split()) == pytest.approx(expected, abs=1e-12)


def test_a_reply_becomes_the_closest_admissible_command():
    admissible = ["go to cabinet 1", "go to cabinet 2", "take apple 1 from cabinet 2", "look"]
    assert closest_command("Thought: the apple. Action: Take apple 1 from cabinet 2.", admissible) == admissible[2]
    assert closest_command("Action: go to cabinet 2", admissible) == "go to cabinet 2"
    assert closest_command("Action: xyzzy", admissible) == "xyzzy"  # nothing close: sent as written
    assert closest_command("Action: go to cabinet 9", []) == "go to cabinet 9"


def _world(goal: str, task_type: str, replies: dict[str, str], winning: str) -> AdmissibleWorld:
    return AdmissibleWorld(task=f"{ROOM}\nYour task is to: {goal}.", task_type=task_type, replies=replies, winning=winning)


FIND = {
    "go to countertop 1": "On the countertop 1, you see a apple 1, and a knife 1.",
    "take knife 1 from countertop 1": "You pick up the knife 1 from the countertop 1.",
    "move knife 1 to countertop 1": "You put the knife 1 in/on the countertop 1.",
    "take apple 1 from countertop 1": "You pick up the apple 1 from the countertop 1.",
    "go to sofa 1": "On the sofa 1, you see a pillow 1.",
    "move apple 1 to sofa 1": "You put the apple 1 in/on the sofa 1.",
}
PROCESS = {"clean": ("sinkbasin", "You clean the apple 1 using the sinkbasin 1."),
           "heat": ("microwave", "You heat the apple 1 using the microwave 1."),
           "cool": ("fridge", "You cool the apple 1 using the fridge 1.")}


def _act(command: str) -> str:
    return f"Thought: next.\nAction: {command}"


async def _play(world, replies, *, max_turns=50):
    llm = ScriptedLLM(["Object of interest: apple", "Plan: I need to 1. find an apple.", *map(_act, replies)])
    trace = await AuthorsStateFlow(max_turns)(world.task, llm=llm, env=world)
    acted = [e.state for e in trace.entries if e.role == "tool"]
    return trace, acted, llm


@pytest.mark.parametrize("task_type", sorted(PROCESS))
async def test_pick_wrong_pick_process_and_put(task_type):
    tool, done = PROCESS[task_type]
    replies = {**FIND, f"go to {tool} 1": f"On the {tool} 1, you see nothing.",
               f"{task_type} apple 1 with {tool} 1": done}
    world = _world(f"{task_type} some apple and put it in sofa", task_type, replies, "move apple 1 to sofa 1")
    steps = ["go to countertop 1", "take knife 1 from countertop 1", "put knife 1 in/on countertop 1", "xyzzy",
             "take apple 1 from countertop 1", f"go to {tool} 1", f"{task_type} apple 1 with {tool} 1", "go to sofa 1",
             "put apple 1 in/on sofa 1"]
    trace, acted, _ = await _play(world, steps)
    state = task_type.capitalize()
    # Pick stays, a wrong pick goes to WrongPick and back, "Nothing happens." stays, the object
    # goes to the process state, which stays until it is done, then Put until the game is won
    assert acted == ["Pick", "Pick", "WrongPick", "Pick", "Pick", state, state, "Put", "Put"]
    assert trace.exit_state == "End" and world.won
    assert world.actions[3] == "xyzzy"  # nothing admissible was close: sent as written


async def test_examine_finds_the_lamp_then_uses_it():
    replies = {"go to shelf 1": "On the shelf 1, you see a pen 2.", "take pen 2 from shelf 1": "You pick up the pen 2 from the shelf 1.",
               "go to sofa 1": "On the sofa 1, you see a pillow 1.",
               "go to desk 1": "On the desk 1, you see a desklamp 1.", "use desklamp 1": "You turn on the desklamp 1."}
    world = _world("examine the pen with the desklamp", "examine", replies, "use desklamp 1")
    llm = ScriptedLLM(["Object of interest: pen", "Plan: find a pen.",
                       *map(_act, ["go to shelf 1", "take pen 2 from shelf 1", "go to sofa 1", "go to desk 1", "use desklamp 1"])])
    trace = await AuthorsStateFlow(50)(world.task, llm=llm, env=world)
    assert [e.state for e in trace.entries if e.role == "tool"] == ["Pick", "Pick", "FindLamp", "FindLamp", "UseLamp"]
    assert world.won and trace.exit_state == "End"


async def test_put_two_goes_back_to_pick_after_every_put_action():
    world = _world("put two apple in sofa", "puttwo", FIND, "never")
    _, acted, _ = await _play(world, ["go to countertop 1", "take apple 1 from countertop 1", "go to sofa 1",
                                      "put apple 1 in/on sofa 1", "go to countertop 1"], max_turns=5)
    assert acted == ["Pick", "Pick", "Put", "Pick", "Pick"]


@pytest.mark.parametrize(("replies", "actions"), [
    (["xyzzy"] * 4, 4),  # "Nothing happens." four times in a row
    (["go to countertop 1"] * 4, 4),  # the same command four times in a row
])
async def test_the_runner_gives_up_on_four_failures_or_repeats(replies, actions):
    world = _world("put some apple on sofa", "put", FIND, "move apple 1 to sofa 1")
    trace, acted, _ = await _play(world, [*replies, "go to sofa 1"])
    assert len(world.actions) == actions and trace.exit_state == "End" and not world.won
    assert trace.entries[-1].content == "Observation: Task failed, now reply TERMINATE."


async def test_a_reply_containing_terminate_ends_the_episode_without_a_command():
    world = _world("put some apple on sofa", "put", FIND, "move apple 1 to sofa 1")
    llm = ScriptedLLM(["Object of interest: apple", "Plan: find it.", _act("go to countertop 1"),
                       "Thought: stuck.\nAction: Terminate", _act("go to sofa 1")])
    trace = await AuthorsStateFlow(50)(world.task, llm=llm, env=world)
    assert world.actions == ["go to countertop 1"] and trace.exit_state == "End" and not world.won
    assert trace.entries[-1].content == "TERMINATE" and len(llm.requests) == 4


async def test_each_agent_sends_its_prompt_and_the_conversation_as_one_message():
    world = _world("put some apple on sofa", "put", FIND, "move apple 1 to sofa 1")
    world.max_steps = 1  # the harness gives the game the same limit
    trace, _, llm = await _play(world, ["go to countertop 1"], max_turns=1)
    check, plan, pick = llm.requests[:3]
    assert [m.content for m in check.messages] == [prompts.CHECK_SYSTEM, " put some apple on sofa.", prompts.CHECK_QUESTION]
    task = f"Household setting: {ROOM}\nYour task is to: put some apple on sofa."
    assert [m.role for m in plan.messages] == ["user"]
    assert plan.messages[0].content == (prompts.PLAN_HEAD + prompts.PLAN_EXAMPLES["put"]).strip() + "\n\n\n" + task + "\n"
    expected = (prompts.SYSTEM + prompts.ACTION_PROMPTS["pick"] + prompts.SYSTEM_END).strip()
    assert pick.messages[0].content == f"{expected}\n\n\n{task}\nPlan: I need to 1. find an apple.\n"
    assert trace.entries[-1].content == "Task failed, now reply TERMINATE.\n"  # the step limit ended the game


def test_each_task_type_has_its_states():
    assert {s.name for s in build_stateflow("examine").states} == {"Init", "Plan", "Pick", "WrongPick", "FindLamp", "UseLamp", "End"}
    assert {s.name for s in build_stateflow("heat").states} == {"Init", "Plan", "Pick", "WrongPick", "Heat", "Put", "End"}


@pytest.mark.integration
@pytest.mark.parametrize(("game", "after_pick"), [("clean-042", "Clean"), ("examine-000", "FindLamp"), ("puttwo-117", "Put")])
async def test_following_the_walkthrough_wins_a_real_game(game, after_pick):
    """Replies that state the walkthrough's commands, matched to the real admissible commands."""
    walkthrough = [re.sub(r"^move (.+?) to (.+)$", r"put \1 in/on \2", " ".join(step.split()))
                   for step in find_game(game, "valid_unseen").walkthrough()]
    replies = iter(["", "Plan: follow the walkthrough.", *(_act(step) for step in walkthrough)])

    def reply(request):
        text = next(replies)
        return text or f"Object of interest: {parse_goal(request.messages[1].content).obj}"

    result = await run_task("alfworld", "stateflow", game, llm=FunctionLLM(reply))
    assert result.success and result.turns == len(walkthrough)
    states = [e["state"] for e in result.trajectory if e["role"] == "tool"]
    assert states[0] == "Pick" and after_pick in states and states[-1] != "Pick" or after_pick == "Put"


async def test_grammar_is_refused_since_the_machine_reads_free_replies():
    from statebound.errors import DefinitionError

    with pytest.raises(DefinitionError, match="drop -O format=grammar"):
        await run_task("alfworld", "stateflow", "examine-000", llm=ScriptedLLM([]), options={"format": "grammar"})
