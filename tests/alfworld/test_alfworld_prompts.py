"""Chain-of-states formats (appendix D/E), the ablations, and the few-shot prompts."""

import importlib.util
from pathlib import Path

import pytest

from statebound.agents.alfworld.prompts import react_prompt, stateact_prompt
from statebound.chain.steps import VARIANTS, ChainOfStates, StateStep
from statebound.errors import DefinitionError

STEP = StateStep(goal="put a hot apple in fridge", location="fridge 1", inventory="apple 1",
                 thought="None", action="put apple 1 in/on fridge 1")
TASK = "You are in the middle of a room.\nYour task is to: put a hot egg in fridge."
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_variant_reads_back_what_it_writes(variant):
    style = VARIANTS[variant]
    parsed = style.parse(style.render(STEP))
    assert parsed.action == STEP.action
    empty = "" if style.as_json else "None"  # JSON writes an empty value as "" (the authors' code)
    for name in ("goal", "location", "inventory", "thought"):
        written = getattr(STEP, name)
        assert getattr(parsed, name) == ((empty if written == "None" else written) if name in style.fields else None)


def test_text_format_is_appendix_e():
    assert VARIANTS["stateact"].render(STEP) == (
        "goal: put a hot apple in fridge\ncurrent location: fridge 1\ncurrent inventory: apple 1\n"
        "thought: None\naction: put apple 1 in/on fridge 1"
    )
    assert "thought" not in VARIANTS["stateact-no-thought"].render(STEP)
    assert "goal" not in VARIANTS["stateact-no-goal"].render(STEP)
    assert "current" not in VARIANTS["stateact-no-state"].render(STEP)


def test_json_is_written_as_the_authors_json_dumps_indent_2_with_empty_strings():
    step = StateStep(goal="put a hot apple in fridge", location="fridge 1", inventory=None, thought="None",
                     action="go to fridge 1")
    assert VARIANTS["stateact-json"].render(step) == (
        '{\n  "goal": "put a hot apple in fridge",\n  "current_location": "fridge 1",\n  "current_inventory": "",\n'
        '  "thought": "",\n  "action": "go to fridge 1"\n}')
    assert VARIANTS["stateact-json"].parse(VARIANTS["stateact-json"].render(step)).action == "go to fridge 1"


def test_json_reads_the_papers_lenient_form():
    papers = '{"goal": "put a hot apple in fridge",\n"current_location": "starting location",\n' \
             '"current_inventory": None,\n"thought": "First I need an apple."\n"action": "go to fridge 1"\n}'
    step = VARIANTS["stateact-json"].parse(papers)
    assert (step.location, step.inventory, step.action) == ("starting location", None, "go to fridge 1")


def test_cut_drops_an_invented_observation():
    reply = VARIANTS["stateact"].render(STEP) + "\nYou put the apple 1 in/on the fridge 1.\n>goal: x"
    assert VARIANTS["stateact"].cut(reply) == VARIANTS["stateact"].render(STEP)
    assert VARIANTS["stateact"].parse("no fields here").action == ""


def test_bad_field_list_is_refused():
    with pytest.raises(DefinitionError, match="include 'action'"):
        ChainOfStates(fields=("goal", "thought"))


def test_react_prompt_is_the_runners():
    prompt = react_prompt("heat", TASK)
    assert prompt.startswith("Interact with a household to solve a task. Here are two examples.\n")
    assert prompt.index("put a hot apple in fridge") < prompt.index("heat some egg and put it in diningtable")
    assert prompt.endswith(f"\nHere is the task.\n{TASK}\n>")
    assert "> think: " in prompt and "\nOK.\n" in prompt


def test_stateact_prompt_matches_appendix_e():
    prompt = stateact_prompt("heat", TASK, VARIANTS["stateact"])
    assert prompt.startswith("Interact with a household to solve a task.\nHere are 2 examples:\nYou are in")
    assert ("current inventory: apple 1\nthought: None\naction: put apple 1 in/on fridge 1\n"
            "You are in the middle of a room.") in prompt  # no final observation, as in the paper
    assert prompt.endswith(f"action: put egg 2 in/on diningtable 1\nHere is the task.\n{TASK}\n>")
    assert "think:" not in prompt and "OK." not in prompt


def test_annotation_file_is_what_the_script_writes():
    spec = importlib.util.spec_from_file_location("annotate", ROOT / "scripts" / "annotate_stateact_alfworld.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import json

    on_disk = json.loads(module.TARGET.read_text(encoding="utf-8"))
    assert on_disk == module.build()
    assert {len(v) for v in on_disk["examples"].values()} == {2}
