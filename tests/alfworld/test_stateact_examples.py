"""StateAct's few-shot examples as the authors corrected them: every action one the game accepts
where the example stands, and every written location and inventory true."""

from __future__ import annotations

import re

import pytest

from statebound.agents.alfworld.prompts import load_prompts
from statebound.envs.alfworld import StateTracker
from statebound.envs.alfworld.tracker import same_value

EXAMPLES = load_prompts("stateact_alfworld.json")["examples"]
ALL = {example["source"]: example for examples in EXAMPLES.values() for example in examples}
_AT = re.compile(r"^(?:open|close) (?P<place>.+)$|^take (?P<obj>.+) from (?P<from>.+)$|^put .+ in/on (?P<to>.+)$"
                 r"|^(?:clean|heat|cool) .+ with (?P<tool>.+)$|^use (?P<lamp>.+)$")


@pytest.mark.parametrize("source", sorted(ALL))
def test_every_action_acts_where_the_example_stands_and_every_state_is_true(source):
    tracker = StateTracker()
    seen: dict[str, str] = {}  # the latest observation at each place
    for step in ALL[source]["steps"]:
        state, action = tracker.state, step["action"]
        assert same_value(step["location"], state.location), (source, action)
        assert same_value(step["inventory"], state.inventory_text), (source, action)
        assert step["observation"] != "Nothing happens.", (source, action)
        if match := _AT.match(action):
            place = match["place"] or match["from"] or match["to"] or match["tool"]
            if place:  # the engine opens, takes, puts and uses appliances only where the agent is
                assert place == state.location, (source, action)
            if thing := match["obj"] or match["lamp"]:  # ... and takes or uses what it saw there
                assert thing in seen.get(state.location, ""), (source, action)
        tracker.update(action, accepted=True)
        seen[tracker.state.location] = step["observation"]


def test_the_authors_corrections_are_in():
    egg = ALL["react_heat_0"]["steps"]
    assert [s["action"] for s in egg[:2]] == ["go to fridge 1", "open fridge 1"]
    assert egg[0]["observation"] == "The fridge 1 is closed." and egg[1]["location"] == "fridge 1"
    pan = {s["action"]: s["thought"] for s in ALL["react_cool_0"]["steps"]}
    assert pan["take pan 1 from stoveburner 3"] == "Now I find a pan (1). Next, I need to take it."
    assert pan["go to fridge 1"] == "Now I take a pan (1). Next, I need to go to a fridge (1) and cool it."
    assert [ALL[f"react_puttwo_{n}"]["goal"] for n in (0, 1)] == ["put two creditcards in dresser", "put two cellphones in sofa"]
    assert "sparybottle" in ALL["react_put_0"]["steps"][0]["thought"]  # the authors keep ReAct's typo
    assert all(len(EXAMPLES[t]) == 2 and EXAMPLES[t][0]["source"].endswith("_1") for t in EXAMPLES)
