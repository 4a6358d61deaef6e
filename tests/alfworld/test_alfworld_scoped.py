"""The scoped StateFlow machine (``stateflow-scoped``): each state offers only the admissible
commands that serve it, as a choice grammar; checked on hand-made lists and on the real engine."""

import re

import pytest

pytest.importorskip("alfworld")

from statebound.agents.alfworld.scoped import choice_grammar, offered, random_choice, scoped_actions
from statebound.bench.evaluate import run_task
from statebound.contract.benchmark import EpisodeLimits
from statebound.envs.alfworld.games import find_game
from statebound.envs.alfworld.goals import parse_goal
from statebound.errors import UnsupportedFeature
from statebound.llm.base import Capabilities
from statebound.llm.testing import FunctionLLM

GOAL = parse_goal("clean some apple and put it in sofa")
AT_COUNTERTOP = [
    "examine countertop 1", "go to cabinet 1", "go to desk 1", "go to fridge 1", "go to sinkbasin 1",
    "go to sofa 1", "go to sofa 2", "inventory", "look", "take apple 1 from countertop 1",
    "take knife 1 from countertop 1",
]
AT_CLOSED_CABINET = ["go to countertop 1", "go to desk 1", "inventory", "look", "open cabinet 1"]


def test_find_opens_what_is_closed_before_it_moves_on():
    assert scoped_actions("Find", GOAL, AT_CLOSED_CABINET, visited={"cabinet 1"}) == ["open cabinet 1"]


def test_find_offers_the_places_not_visited_yet_then_every_place():
    places = scoped_actions("Find", GOAL, AT_COUNTERTOP, visited={"countertop 1", "desk 1", "sofa 2"})
    assert places == ["go to cabinet 1", "go to fridge 1", "go to sinkbasin 1", "go to sofa 1"]
    everywhere = {"cabinet 1", "desk 1", "fridge 1", "sinkbasin 1", "sofa 1", "sofa 2"}
    assert scoped_actions("Find", GOAL, AT_COUNTERTOP, visited=everywhere) == [
        c for c in AT_COUNTERTOP if c.startswith("go to")]


def test_each_state_offers_its_completing_action_alone_once_it_is_possible():
    assert scoped_actions("Take", GOAL, AT_COUNTERTOP, visited=set()) == ["take apple 1 from countertop 1"]
    at_sink = ["go to fridge 1", "go to sinkbasin 2", "clean apple 1 with sinkbasin 1", "look"]
    assert scoped_actions("Clean", GOAL, at_sink, visited=set()) == ["clean apple 1 with sinkbasin 1"]
    assert scoped_actions("Clean", GOAL, AT_COUNTERTOP, visited=set()) == ["go to sinkbasin 1"]
    at_sofa = ["go to fridge 1", "go to sofa 2", "put apple 1 in/on sofa 1", "examine sofa 1"]
    assert scoped_actions("Put", GOAL, at_sofa, visited=set()) == ["put apple 1 in/on sofa 1"]
    engine_form = ["go to fridge 1", "move apple 1 to sofa 1"]  # legacy_put off
    assert scoped_actions("Put", GOAL, engine_form, visited=set()) == ["move apple 1 to sofa 1"]
    closed_sofa = ["go to fridge 1", "go to sofa 2", "open sofa 1"]
    assert scoped_actions("Put", GOAL, closed_sofa, visited=set()) == ["open sofa 1"]
    assert scoped_actions("Put", GOAL, AT_COUNTERTOP, visited={"sofa 1"}) == ["go to sofa 2"]
    lamp_here = ["go to desk 1", "use desklamp 1"]
    assert scoped_actions("UseLamp", GOAL, lamp_here, visited=set()) == ["use desklamp 1"]


def test_an_empty_scope_offers_everything_admissible():
    nothing_to_take = ["go to cabinet 1", "look"]
    assert scoped_actions("Take", GOAL, nothing_to_take, visited=set()) == nothing_to_take


def test_choice_grammar_is_exactly_the_actions_and_reads_back():
    actions = ["go to sofa 1", 'say "hi"', "back\\slash"]
    grammar = choice_grammar(actions)
    assert grammar.startswith('root ::= "go to sofa 1" | "say \\"hi\\""')
    assert offered(grammar) == actions
    with pytest.raises(ValueError, match="at least one"):
        choice_grammar([])


def test_the_random_baseline_picks_an_offered_action_the_same_way_each_time():
    from statebound.llm.base import chat

    grammar = choice_grammar([f"go to drawer {n}" for n in range(1, 9)])
    picks = [random_choice(chat(("user", f"turn {turn}"), grammar=grammar)) for turn in range(12)]
    assert all(pick in offered(grammar) for pick in picks) and len(set(picks)) > 1
    assert picks == [random_choice(chat(("user", f"turn {turn}"), grammar=grammar)) for turn in range(12)]
    with pytest.raises(ValueError, match="choice grammar"):
        random_choice(chat(("user", "no grammar")))


def _picker(pick):
    """A grammar-capable function model that replies with ``pick(choices)`` of each request."""
    return FunctionLLM(lambda request: pick(offered(request.grammar)),
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
    walkthrough = [" ".join(step.split()) for step in find_game(game, "valid_unseen").walkthrough()]
    steps = iter(re.sub(r"^move (.+?) to (.+)$", r"put \1 in/on \2", step) for step in walkthrough)

    def follow(choices: list[str]) -> str:  # a state that offers one command takes it without asking
        return next(step for step in steps if step in choices)

    result = await run_task("alfworld", "stateflow-scoped", game, llm=_picker(follow))
    assert result.success and result.turns == len(walkthrough)
    replies = [e for e in result.trajectory if e["role"] == "assistant"]
    assert [e["state"] for e in replies] == states
    expected = [re.sub(r"^move (.+?) to (.+)$", r"put \1 in/on \2", step) for step in walkthrough]
    assert [e["content"] for e in replies] == expected  # every step of the walkthrough, in order,
    assert all(e["content"] in e["choice"]["candidates"] for e in replies)  # each among its state's offer


@pytest.mark.integration
async def test_find_never_goes_back_while_places_are_left_on_a_real_game():
    """A model that always takes the first offered action searches place after place."""
    llm = _picker(lambda choices: choices[0])  # in clean-042 the bowl is not in the first places
    result = await run_task("alfworld", "stateflow-scoped", "clean-042", llm=llm, limits=EpisodeLimits(max_turns=12))
    chosen = [e for e in result.trajectory if e["role"] == "assistant"]
    assert all(e["content"] in e["choice"]["candidates"] for e in chosen)
    replies = [e["content"] for e in chosen]
    places = [reply for reply in replies if reply.startswith("go to ")]
    assert len(places) >= 3 and len(set(places)) == len(places)


async def test_a_backend_without_grammars_is_refused_before_the_game():
    plain = FunctionLLM(lambda request: "look")
    with pytest.raises(UnsupportedFeature, match="agent stateflow-scoped: 'function' cannot run -O choice=grammar"):
        await run_task("alfworld", "stateflow-scoped", "put-018", llm=plain)
    assert plain.requests == []
