"""The ALFWorld grammars (format=grammar): llama.cpp parses them, they accept every action of the
134 walkthroughs (each game's with the names of its opening text) and every step of the few-shot
examples, and refuse what the model wrote when it wandered (checked with llama.cpp's own grammar
engine)."""

from __future__ import annotations

import re
from dataclasses import asdict

import pytest
from grammar_check import grammar_accepts, grammar_parses

from statebound.agents.alfworld.grammar import (
    THOUGHT_CHARS,
    action_grammar,
    names_in,
    react_grammar,
    stateact_grammar,
)
from statebound.agents.alfworld.phases import read_action
from statebound.agents.alfworld.prompts import load_prompts
from statebound.chain.loop import ChainPolicy as StateActPolicy
from statebound.chain.loop import ReactPolicy
from statebound.chain.steps import VARIANTS, StateStep
from statebound.envs.alfworld import list_games

ACTION = action_grammar()
REACT = react_grammar()
_MOVE = re.compile(r"^move (.+) to (.+)$")


def walkthrough_actions() -> set[str]:
    """Every walkthrough action, placements in the prompts' ``put X in/on Y`` form."""
    return {_MOVE.sub(r"put \1 in/on \2", action) for game in list_games() for action in game.walkthrough()}


def react_turns() -> list[str]:
    """Every ``> ...`` turn of the ReAct examples, as the model writes it after ``>``."""
    prompts = load_prompts("react_alfworld_3prompts.json")
    return [line[1:] for text in prompts.values() for line in text.splitlines() if line.startswith("> ")]


def annotated_steps() -> list[StateStep]:
    examples = load_prompts("stateact_alfworld.json")["examples"]
    return [StateStep.from_mapping({**step, "goal": example["goal"]})
            for typed in examples.values() for example in typed for step in example["steps"]]  # fmt: skip


ROOM = ("You are in the middle of a room. Looking quickly around you, you see a cabinet 2, a cabinet 1, "
        "a countertop 1, a sinkbasin 1, and a toaster 1.\nYour task is to: clean some bowl and put it in cabinet.")


def test_every_grammar_parses_in_llama_cpp():
    names = names_in(ROOM)
    grammars = [ACTION, REACT, action_grammar(names), react_grammar(names),
                *(stateact_grammar(style, names) for style in VARIANTS.values())]  # fmt: skip
    assert all(grammar_parses(g) for g in grammars)
    assert not grammar_parses(ACTION.replace("thing ::=", "things ::="))  # the check can fail


def test_a_games_names_are_its_receptacles_its_goal_and_the_desklamp():
    assert names_in(ROOM) == ("bowl", "cabinet", "countertop", "desklamp", "sinkbasin", "toaster")


def test_a_games_grammar_names_only_what_its_opening_names():
    grammar = action_grammar(names_in(ROOM))
    assert grammar_accepts(grammar, "clean bowl 1 with sinkbasin 1")
    assert grammar_accepts(grammar, "put bowl 1 in/on cabinet 2")
    assert grammar_accepts(ACTION, "clean the 6 with a 20")  # what SmolLM2 wrote under the open grammar
    for reply in ("clean the 6 with a 20", "go to fridge 1", "take apple 1 from countertop 1"):
        assert not grammar_accepts(grammar, reply), reply


@pytest.mark.integration
def test_each_walkthrough_fits_the_grammar_of_its_games_opening():
    """Two games of each type on the real engine: the names come from what the agent is shown."""
    pytest.importorskip("alfworld")
    from statebound.envs.alfworld import AlfworldEnv

    games = [game for task_type in sorted({g.task_type for g in list_games()})
             for game in [g for g in list_games() if g.task_type == task_type][:2]]  # fmt: skip
    env = AlfworldEnv()
    try:
        for game in games:
            grammar = action_grammar(names_in(env.reset(game.id)))
            for action in game.walkthrough():
                written = _MOVE.sub(r"put \1 in/on \2", action)
                assert grammar_accepts(grammar, written), (game.id, written)
    finally:
        env.close()


def test_action_grammar_accepts_every_walkthrough_action():
    actions = walkthrough_actions()
    assert len(actions) > 250 and {a.split()[0] for a in actions} >= {"go", "take", "put", "use", "heat"}
    for action in actions:
        assert grammar_accepts(ACTION, action), action
        assert read_action(action) == action


@pytest.mark.parametrize("reply", [
    "Nothing happens.",  # the observation the unconstrained machine copied
    "You need to clean the spatula and put it in the drawer.",
    "go to the cabinet",  # no number
    "take apple 1 from countertop 1\ngo to fridge 1",  # two actions
    "put apple 1 in fridge 1",  # the engine's form is in/on
    "> go to desk 1",
])  # fmt: skip
def test_action_grammar_refuses_anything_else(reply):
    assert not grammar_accepts(ACTION, reply)


def test_react_grammar_accepts_the_examples_as_react_reads_them():
    turns = react_turns()
    assert len(turns) > 200 and any(t.startswith(" think:") for t in turns)
    for turn in turns:
        assert grammar_accepts(REACT, turn), turn
        assert ReactPolicy().read(turn).text == turn.strip()
    assert not grammar_accepts(REACT, " think: " + "x" * (THOUGHT_CHARS + 1))
    assert not grammar_accepts(REACT, " Nothing happens.")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_stateact_grammar_accepts_every_annotated_step(variant):
    style, grammar = VARIANTS[variant], stateact_grammar(VARIANTS[variant])
    steps = annotated_steps()
    assert len(steps) > 100
    for step in steps:
        written = style.render(step)
        assert grammar_accepts(grammar, written), written
        assert StateActPolicy(style=style).read(written).action == step.action


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_stateact_grammar_wants_every_field_and_a_real_action(variant):
    style, grammar = VARIANTS[variant], stateact_grammar(VARIANTS[variant])
    step = annotated_steps()[0]
    written = style.render(step)
    assert not grammar_accepts(grammar, style.render(StateStep.from_mapping({**asdict(step), "action": "look around"})))
    assert not grammar_accepts(grammar, written.replace(style.render(step).splitlines()[0], "", 1).lstrip("\n"))
    assert not grammar_accepts(grammar, written + "\nOn the desk 1, you see a pen 1.")  # an invented observation
