"""The gold state tracker of StateAct section 6.3, checked on the paper's own annotation."""

import pytest

from statebound.chain.steps import VARIANTS
from statebound.envs.alfworld import StateCheck, StateTracker, TrackedState, state_accuracy
from statebound.envs.alfworld.tracker import same_value

# StateAct appendix E, second example (the authors' annotation, two countertop visits left out).
APPENDIX_E_EGG = """\
>goal: heat some egg and put it in diningtable
current location: starting location
current inventory: None
thought: To solve the task, I need to find and take an egg, then heat it with microwave, then put it in diningtable.
action: go to fridge 1
The fridge 1 is closed.
>goal: heat some egg and put it in diningtable
current location: fridge 1
current inventory: None
thought: None
action: open fridge 1
You open the fridge 1. The fridge 1 is open. In it, you see a lettuce 2, a mug 2, and a potato 3.
>goal: heat some egg and put it in diningtable
current location: fridge 1
current inventory: None
thought: None
action: go to countertop 3
On the countertop 3, you see a bowl 1, a butterknife 1, a egg 2, a kettle 2, a plate 1, a sink 1, and a spatula 2.
>goal: heat some egg and put it in diningtable
current location: countertop 3
current inventory: None
thought: Now I find an egg (2). Next, I need to take it.
action: take egg 2 from countertop 3
You pick up the egg 2 from the countertop 3.
>goal: heat some egg and put it in diningtable
current location: countertop 3
current inventory: egg 2
thought: Now I take an egg (2). Next, I need go to a microwave (1) and heat it.
action: go to microwave 1
The microwave 1 is closed.
>goal: heat some egg and put it in diningtable
current location: microwave 1
current inventory: egg 2
thought: None
action: heat egg 2 with microwave 1
You heat the egg 2 using the microwave 1.
>goal: heat some egg and put it in diningtable
current location: microwave 1
current inventory: egg 2
thought: Now I heat an egg (2). Next, I need to put it in/on diningtable 1.
action: go to diningtable 1
On the diningtable 1, you see a apple 2, a bread 3, a egg 1.
>goal: heat some egg and put it in diningtable
current location: diningtable 1
current inventory: egg 2
thought: None
action: put egg 2 in/on diningtable 1
"""


def _replay(text: str) -> list[StateCheck]:
    style = VARIANTS["stateact"]
    tracker = StateTracker()
    checks = []
    for block in text.split(">")[1:]:
        step = style.parse(block)
        checks.append(StateCheck(step.location, step.inventory, tracker.state))
        tracker.update(step.action, accepted=True)
    return checks


def test_tracker_agrees_with_the_papers_annotation_everywhere():
    checks = _replay(APPENDIX_E_EGG)
    assert len(checks) == 8
    assert state_accuracy(checks)["state_accuracy"] == 1.0


def test_a_wrong_location_and_a_forgotten_item_are_counted():
    wrong = APPENDIX_E_EGG.replace("current location: countertop 3\ncurrent inventory: egg 2",
                                   "current location: microwave 1\ncurrent inventory: None")
    figures = state_accuracy(_replay(wrong))
    assert figures["state_location_accuracy"] == pytest.approx(7 / 8)
    assert figures["state_inventory_accuracy"] == pytest.approx(7 / 8)
    assert figures["state_accuracy"] == pytest.approx(7 / 8)


def test_refused_actions_do_not_move_the_state():
    tracker = StateTracker()
    tracker.update("go to desk 1", accepted=True)
    tracker.update("go to sofa 1", accepted=False)
    tracker.update("take pen 1 from desk 1", accepted=False)
    assert tracker.state == TrackedState("desk 1", ())
    tracker.update("take pen 1 from desk 1", accepted=True)
    assert tracker.state.inventory_text == "pen 1"
    tracker.update("move pen 1 to shelf 1", accepted=True)  # the engine's own put form
    assert tracker.state == TrackedState("desk 1", ())


def test_values_compare_without_case_spacing_or_none_words():
    assert same_value("Fridge 1.", "fridge 1")
    assert same_value("nothing", "None") and same_value(None, "None")
    assert same_value("cellphone 3, pen 1", "pen 1, cellphone 3")
    assert not same_value("fridge 2", "fridge 1")
    assert state_accuracy([]) == {}
