"""Learning a machine from solved episodes: typed templates, roles told apart by milestones,
transition counts, and the tiers of what each state offers (replayed without a model)."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from kitchen import Kitchen, lessons, slots

from statebound.induce.domains import Domain, register_domain
from statebound.induce.flow import state_plans
from statebound.induce.learn import learn
from statebound.induce.places import places_hint
from statebound.induce.templates import Occurrence, Template, generalise, typed_words
from statebound.llm.testing import ScriptedLLM

GAMES = [("cool", "apple", "counter 1", "shelf"), ("cool", "egg", "fridge 1", "table"),
         ("cool", "apple", "table 1", "shelf"), ("cool", "milk", "counter 1", "table"),
         ("put", "apple", "counter 1", "shelf"), ("put", "cup", "table 1", "shelf"), ("put", "egg", "sink 1", "table")]


@pytest.fixture(scope="module")
def machine():
    register_domain(Domain("kitchen", slots=("object", "receptacle"), slot_values=slots,
                           task_type=lambda text: "cool" if "cool some" in text else "put"))
    return learn(lessons(GAMES), benchmark="kitchen", slots=("object", "receptacle"))


def test_words_are_typed_by_where_they_come_from():
    assert typed_words("take apple 1 from counter 1", {"object": "apple"}) == (
        "take", "{object}", "{n}", "from", "counter", "{n}")
    shown = frozenset({"counter", "table"})
    occurrences = [Occurrence(tuple(a.split()), typed_words(a, {"object": o}), shown)
                   for a, o in (("take apple 1 from counter 1", "apple"), ("take egg 2 from table 1", "egg"),
                                ("take milk 1 from counter 1", "milk"))]
    assert generalise(occurrences).text == "take {object} {n} from {seen} {n}"   # the place was shown
    assert generalise(occurrences, fixed=()).text == "take {object} {n} from {seen} {n}"
    unseen = [Occurrence(o.words, o.typed, frozenset()) for o in occurrences]
    assert generalise(unseen).text == "take {object} {n} from {any} {n}"
    fridge = [Occurrence(("go", "to", "fridge", "1"), ("go", "to", "fridge", "{n}"), frozenset())] * 3
    assert generalise(fridge).text == "go to fridge {n}"                          # a learnt constant
    assert generalise(fridge[:2], fixed={0, 1}).text == "go to {any} {n}"         # too few to be one
    assert generalise(fridge[:2], fixed={0, 1, 2}).text == "go to fridge {n}"     # unless all its kind say so


def test_a_template_matches_offered_actions_by_its_typed_slots():
    take = Template("take {object} {n} from {seen} {n}", prefer=frozenset({"counter"}))
    assert take.matches("take apple 1 from counter 1", {"object": "apple"}, {"counter"})
    assert not take.matches("take apple 1 from counter 1", {"object": "egg"}, {"counter"})
    assert not take.matches("take apple 1 from counter 1", {"object": "apple"}, {"table"})
    assert not take.matches("take apple one from counter 1", {"object": "apple"})
    assert take.preferred("take apple 1 from counter 1") and not take.preferred("take apple 1 from table 1")


def test_roles_are_told_apart_by_the_milestones_before_them(machine):
    cool = machine.graph("cool")
    names = [role.name for role in cool.roles]
    # going to the fridge to search and to cool are two roles: the second always ends at the fridge
    assert names == ["go to {seen}", "take {object} from {seen}", "go to fridge", "cool {object} with fridge",
                     "go to {receptacle}", "put {object} in {receptacle}"]
    by_name = cool.by_name
    assert by_name["go to {seen}"].values == {"counter": 2, "fridge": 1, "table": 1}
    assert by_name["take {object} from {seen}"].milestone and by_name["cool {object} with fridge"].milestone
    assert cool.start == {"go to {seen}": 4} and by_name["put {object} in {receptacle}"].next == {"Done": 4}
    assert by_name["go to fridge"].next == {"cool {object} with fridge": 4}
    assert [r.name for r in machine.graph("put").roles] == [
        "go to {seen}", "take {object} from {seen}", "go to {receptacle}", "put {object} in {receptacle}"]


def test_each_state_offers_the_step_nearest_the_end_first(machine):
    plans = state_plans(machine, machine.graph("cool"))
    game = Kitchen("cool", "pear", "table 1", "shelf")
    text = game.reset("t")
    task = slots(text)
    assert plans[None].offer(game.offered_actions(), task, {"counter", "fridge", "table"}, []) == [
        "go to counter 1", "go to fridge 1", "go to table 1"]          # the places objects were found first
    game.step("go to counter 1")
    searching = plans["go to {seen}"]
    # nothing to take here: search on among the places not tried since the last milestone
    assert searching.offer(game.offered_actions(), task, {"counter", "fridge", "table"}, ["go to counter 1"]) == [
        "go to fridge 1", "go to table 1"]
    game.step("go to table 1")
    assert searching.offer(game.offered_actions(), task, {"table"}, ["go to table 1"]) == ["take pear 1 from table 1"]
    assert searching.after("take pear 1 from table 1", task) == "cool: take {object} from {seen}"
    assert searching.after("go to shelf 1", task) == "cool: go to {seen}"   # no role fits: the state stays


def test_the_induced_flow_wins_unseen_games_with_random_picks(machine):
    wins = 0
    for where in ("counter 1", "table 1", "fridge 1"):
        game = Kitchen("cool", "pear", where, "shelf")
        flow = machine.flow(chooser="random", task_type="cool", max_turns=12)
        result = asyncio.run(flow.run(game.reset("t"), deps=game))
        wins += game.won
        assert result.exit_state == "Done"
    assert wins == 3


def test_places_count_where_each_thing_a_task_named_was_seen(machine):
    # an apple was seen on the counter in two games (going there, then taking it), on the table in one;
    # the places are the words of the actions' free slots, the things the tasks' slot values
    assert machine.places == {"apple": {"counter": 4, "table": 2}, "cup": {"table": 2},
                              "egg": {"fridge": 2, "sink": 2}, "milk": {"counter": 2}}


def test_the_hint_names_the_candidates_places_most_seen_first():
    places = {"apple": {"table": 2, "counter": 4, "sink": 1}}
    assert places_hint(places, ["apple", "shelf"], ["go to table 1", "go to counter 1", "go to shelf 1"]) == (
        "In solved games, a apple was seen at: counter (4), table (2).")
    assert places_hint(places, ["apple"], ["go to shelf 1"]) is None      # nothing said of these places
    assert places_hint(places, ["pear"], ["go to counter 1"]) is None     # nor of a thing never seen


def _reads_the_hint(context: str, text: str) -> list[float]:
    """A model that prefers the words of the last line telling where things were seen."""
    hint = next((line for line in reversed(context.splitlines()) if line.startswith("In solved games")), "")
    return [0.0 if word in hint.replace("(", " ").split() else -1.0 for word in text.split()]


def _first_action(machine, chooser: str) -> tuple[str, dict]:
    game = Kitchen("cool", "cup", "table 1", "shelf")  # a cup was seen on the table only
    flow = machine.flow(chooser=chooser, task_type="cool", max_turns=12)
    result = asyncio.run(flow.run(game.reset("t"), deps=game, llm=ScriptedLLM(scorer=_reads_the_hint)))
    choice = next(e.data["choice"] for e in result.history if isinstance(e.data, dict) and "choice" in e.data)
    return choice["candidates"][choice["picked"]], choice


def test_the_model_reads_where_the_tasks_thing_was_seen_and_the_control_does_not(machine):
    blind = dataclasses.replace(machine, places={})
    picked, choice = _first_action(machine, "score")
    assert picked == "go to table 1" and choice["candidates"][0] == "go to counter 1"
    assert choice["prompt"].endswith("In solved games, a cup was seen at: table (2).")
    picked, choice = _first_action(blind, "score")                  # no places learnt: no hint, first wins
    assert picked == "go to counter 1" and "prompt" not in choice
    # the random control runs the same machine: same candidates, same draws, no prompt built
    assert _first_action(machine, "random") == _first_action(blind, "random")
