"""The scoped StateFlow machine (``stateflow-scoped``): each state offers only the admissible
commands that serve it, as a choice grammar; checked on hand-made lists and on the real engine."""

import json
import re

import pytest

pytest.importorskip("alfworld")

from statebound.agents.alfworld.benchmark import make_benchmark
from statebound.agents.alfworld.scoped import choice_grammar, scoped_actions
from statebound.bench.types import EpisodeLimits, Task
from statebound.envs.alfworld.games import find_game
from statebound.envs.alfworld.goals import parse_goal
from statebound.errors import UnsupportedFeature
from statebound.llm.base import Capabilities
from statebound.llm.testing import FunctionLLM

GOAL = parse_goal("clean some apple and put it in sofa")
AT_COUNTERTOP = [
    "examine countertop 1", "go to cabinet 1", "go to desk 1", "go to fridge 1", "go to sinkbasin 1",
    "go to sofa 1", "inventory", "look", "open cabinet 1", "take apple 1 from countertop 1",
    "take knife 1 from countertop 1",
]


def test_find_offers_unvisited_places_and_opening():
    offered = scoped_actions("Find", GOAL, AT_COUNTERTOP, visited={"countertop 1", "desk 1"})
    assert offered == ["go to cabinet 1", "go to fridge 1", "go to sinkbasin 1", "go to sofa 1", "open cabinet 1"]


def test_find_offers_every_place_again_once_all_are_visited():
    everywhere = {"cabinet 1", "desk 1", "fridge 1", "sinkbasin 1", "sofa 1"}
    offered = scoped_actions("Find", GOAL, AT_COUNTERTOP, visited=everywhere)
    assert [c for c in offered if c.startswith("go to")] == [c for c in AT_COUNTERTOP if c.startswith("go to")]


def test_each_state_offers_only_its_kind_of_action():
    assert scoped_actions("Take", GOAL, AT_COUNTERTOP, visited=set()) == ["take apple 1 from countertop 1"]
    held = ["go to fridge 1", "go to sinkbasin 1", "go to sofa 1", "clean apple 1 with sinkbasin 1", "look"]
    assert scoped_actions("Clean", GOAL, held, visited=set()) == ["go to sinkbasin 1", "clean apple 1 with sinkbasin 1"]
    at_sofa = ["go to fridge 1", "put apple 1 in/on sofa 1", "examine sofa 1"]
    assert scoped_actions("Put", GOAL, at_sofa, visited=set()) == ["put apple 1 in/on sofa 1"]
    engine_form = ["go to fridge 1", "move apple 1 to sofa 1"]  # legacy_put off
    assert scoped_actions("Put", GOAL, engine_form, visited=set()) == ["move apple 1 to sofa 1"]


def test_an_empty_scope_offers_everything_admissible():
    nothing_to_take = ["go to cabinet 1", "look"]
    assert scoped_actions("Take", GOAL, nothing_to_take, visited=set()) == nothing_to_take


def test_choice_grammar_is_exactly_the_actions():
    assert choice_grammar(["go to sofa 1", 'say "hi"']) == 'root ::= "go to sofa 1" | "say \\"hi\\""'
    with pytest.raises(ValueError, match="at least one"):
        choice_grammar([])


def _choices(grammar: str) -> list[str]:
    """The sentences of a choice grammar, read back from its GBNF."""
    assert grammar.startswith("root ::= ")
    return [json.loads(choice) for choice in re.findall(r'"(?:[^"\\]|\\.)*"', grammar)]


def _picker(pick):
    """A grammar-capable function model that replies with ``pick(choices)`` of each request."""
    return FunctionLLM(lambda request: pick(_choices(request.grammar)),
                       capabilities=Capabilities(completion=True, chat=True, grammar=True))


@pytest.mark.integration
@pytest.mark.parametrize(("game", "states"), [
    ("clean-042", ["Find", "Take", "Clean", "Clean", "Put", "Put"]),
    ("heat-094", ["Find", "Take", "Heat", "Heat", "Put", "Put", "Put"]),  # opens the fridge in Put
    ("puttwo-117", ["Find", "Take", "Put", "Put", "Put", "Find", "Take", "Put", "Put"]),
    ("examine-000", ["Find", "Take", "UseLamp", "UseLamp"]),
])
async def test_the_walkthrough_is_within_the_scopes_and_wins_a_real_game(game, states):
    """Follow the game's stored walkthrough: each of its steps is among the actions its state
    offers, the machine moves through its states in order, and the game is won."""
    benchmark = make_benchmark()
    task = next(t for t in benchmark.tasks() if t.id == game)
    walkthrough = [" ".join(step.split()) for step in find_game(game, "valid_unseen").walkthrough()]
    steps = iter(re.sub(r"^move (.+?) to (.+)$", r"put \1 in/on \2", step) for step in walkthrough)

    def follow(choices: list[str]) -> str:
        step = next(steps)
        assert step in choices, f"{step!r} is not offered: {choices}"
        return step

    result = await benchmark.run_episode(task, "stateflow-scoped", _picker(follow), seed=0, limits=EpisodeLimits())
    assert result.success and result.turns == len(walkthrough)
    assert [e["state"] for e in result.trajectory if e["role"] == "assistant"] == states


@pytest.mark.integration
async def test_find_never_goes_back_while_places_are_left_on_a_real_game():
    """A model that always takes the first offered action searches place after place."""
    benchmark = make_benchmark(max_steps=12)
    task = next(t for t in benchmark.tasks() if t.id == "clean-042")  # the bowl is not in the first places
    llm = _picker(lambda choices: choices[0])
    result = await benchmark.run_episode(task, "stateflow-scoped", llm, seed=0, limits=EpisodeLimits())
    offered = [set(_choices(request.grammar)) for request in llm.requests]
    replies = [e["content"] for e in result.trajectory if e["role"] == "assistant"]
    assert all(reply in choices for reply, choices in zip(replies, offered))
    places = [reply for reply in replies if reply.startswith("go to ")]
    assert len(places) >= 3 and len(set(places)) == len(places)


async def test_a_backend_without_grammars_is_refused_before_the_game():
    plain = FunctionLLM(lambda request: "look")
    with pytest.raises(UnsupportedFeature, match="agent stateflow-scoped needs a model whose backend accepts GBNF"):
        await make_benchmark().run_episode(Task(id="put-018", question="q"), "stateflow-scoped", plain,
                                           seed=0, limits=EpisodeLimits())
    assert plain.requests == []
