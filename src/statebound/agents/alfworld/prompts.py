"""Few-shot prompts for ALFWorld: ReAct's (as its runner builds them) and StateAct's (appendix E).

Both use the two examples ReAct's runner picks for the task's type, ``react_<type>_1`` then
``react_<type>_0``; StateAct's are the annotated copies in ``stateact_alfworld.json`` (made by
``scripts/annotate_stateact_alfworld.py``).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from statebound.chain.steps import ChainOfStates, StateStep
from statebound.envs.alfworld import TASK_TYPES
from statebound.errors import DefinitionError

__all__ = ["load_prompts", "react_prompt", "stateact_prompt"]

REACT_HEADER = "Interact with a household to solve a task. Here are two examples.\n"
STATEACT_HEADER = "Interact with a household to solve a task.\nHere are 2 examples:\n"


@cache
def load_prompts(name: str) -> dict[str, Any]:
    """A JSON file from ``statebound/data/prompts``."""
    path = resources.files("statebound") / "data" / "prompts" / name
    return json.loads(path.read_text(encoding="utf-8"))


def _check_type(task_type: str) -> None:
    if task_type not in TASK_TYPES:
        raise DefinitionError(f"unknown ALFWorld task type {task_type!r}; use one of {TASK_TYPES}")


def react_prompt(task_type: str, task: str) -> str:
    """ReAct's prompt for a task: header, two examples, the task, and ``>`` for the first turn."""
    _check_type(task_type)
    react = load_prompts("react_alfworld_3prompts.json")
    examples = react[f"react_{task_type}_1"] + react[f"react_{task_type}_0"]
    return f"{REACT_HEADER}{examples}\nHere is the task.\n{task}\n>"


def _stateact_example(example: dict[str, Any], style: ChainOfStates) -> str:
    """One annotated example; like appendix E it ends at the last action (no final observation)."""
    lines = [example["intro"]]
    for step in example["steps"]:
        written = StateStep.from_mapping({**step, "goal": example["goal"]})
        lines += [">" + style.render(written), step["observation"]]
    return "\n".join(lines[:-1]) + "\n"


def stateact_prompt(task_type: str, task: str, style: ChainOfStates) -> str:
    """StateAct's prompt (appendix E) with the fields and format of ``style``."""
    _check_type(task_type)
    examples = load_prompts("stateact_alfworld.json")["examples"][task_type]
    shots = "".join(_stateact_example(example, style) for example in examples)
    return f"{STATEACT_HEADER}{shots}Here is the task.\n{task}\n>"
