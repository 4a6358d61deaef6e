"""Annotate ReAct's ALFWorld few-shot trajectories with StateAct's chain of states, corrected as the
StateAct authors corrected them.

Writes ``src/statebound/data/prompts/stateact_alfworld.json``: for each task type the two
trajectories StateAct's runner uses (``--prompt_ids 1 0``: ``react_<type>_1`` then ``react_<type>_0``),
each as a list of steps ``{location, inventory, thought, action, observation}`` plus the episode's goal.

- goal: the task sentence (``Your task is to: put a hot apple in fridge.`` -> ``put a hot apple in
  fridge``), as in StateAct's appendix E;
- location / inventory: the state *before* the step's action, derived by replaying the actions with
  :class:`statebound.envs.alfworld.StateTracker` (so they are consistent with the trajectory);
- thought: ReAct's ``think:`` lines since the previous action, joined by a space (``None`` if none);
  their ``OK.`` observations are dropped;
- :data:`CORRECTIONS`: what the authors' annotated examples change in ReAct's text (their release,
  ``alfworld_runs/prompts/alfworld_prompts_utils_v4_<type>_base.py`` in the StateAct repository,
  ``<type>_v4_base_1`` and ``<type>_v4_base_0``), applied before annotating. Their typos are kept
  (``sparybottle``, ``coutertop``), as they are in the authors' examples.

Run: ``.venv/bin/python scripts/annotate_stateact_alfworld.py`` (``--check`` only verifies that the
file on disk is what the script would write).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from statebound.envs.alfworld import TASK_TYPES, StateTracker
from statebound.envs.alfworld.goals import goal_sentence

PROMPTS = Path(__file__).resolve().parents[1] / "src" / "statebound" / "data" / "prompts"
SOURCE = PROMPTS / "react_alfworld_3prompts.json"
TARGET = PROMPTS / "stateact_alfworld.json"
EXAMPLE_IDS = (1, 0)  # the two examples StateAct's runner puts in each prompt (--prompt_ids 1 0), in order
AUTHORS = "StateAct repository, alfworld_runs/prompts/alfworld_prompts_utils_v4_{type}_base.py, {type}_v4_base_{n}"

# The authors' corrections of ReAct's text, per example: (old, new) replacements of its lines.
CORRECTIONS: dict[str, list[tuple[str, str]]] = {
    # the egg example opens the fridge without going there: "go to fridge 1" is added
    "react_heat_0": [("> open fridge 1\n", "> go to fridge 1\nThe fridge 1 is closed.\n> open fridge 1\n")],
    # the pan example writes its "I find a pan, I need to take it" thought between the take and the
    # take's observation: the thought moves before the take, the observation back after it
    "react_cool_0": [("> take pan 1 from stoveburner 3\n> think: Now I find a pan (1). Next, I need to take it.\n"
                      "OK.\nYou pick up the pan 1 from the stoveburner 3.\n",
                      "> think: Now I find a pan (1). Next, I need to take it.\nOK.\n"
                      "> take pan 1 from stoveburner 3\nYou pick up the pan 1 from the stoveburner 3.\n")],
}
# The authors' goals where they are not the task sentence: the two put-two tasks in the plural.
GOALS = {"react_puttwo_0": "put two creditcards in dresser", "react_puttwo_1": "put two cellphones in sofa"}


def corrected(source: str, trajectory: str) -> str:
    """ReAct's trajectory ``source`` with the authors' corrections; each must apply exactly once."""
    for old, new in CORRECTIONS.get(source, []):
        if trajectory.count(old) != 1:
            raise SystemExit(f"{source}: the correction for {old!r} does not apply once; is the ReAct file the expected one?")
        trajectory = trajectory.replace(old, new)
    return trajectory


def annotate(trajectory: str, *, goal: str | None = None) -> dict[str, object]:
    """One ReAct trajectory -> ``{"intro", "goal", "steps"}`` (``goal``: the task sentence unless given)."""
    lines = [line for line in trajectory.strip().splitlines() if line.strip()]
    first_turn = next(i for i, line in enumerate(lines) if line.startswith(">"))
    intro = "\n".join(lines[:first_turn])
    tracker = StateTracker()
    steps: list[dict[str, str]] = []
    thoughts: list[str] = []
    index = first_turn
    while index < len(lines):
        turn = lines[index].lstrip(">").strip()
        index += 1
        observation_lines = []
        while index < len(lines) and not lines[index].startswith(">"):
            observation_lines.append(lines[index])
            index += 1
        if turn.startswith("think:"):
            thoughts.append(turn.removeprefix("think:").strip())
            continue
        state = tracker.state
        steps.append({
            "location": state.location,
            "inventory": state.inventory_text,
            "thought": " ".join(thoughts) or "None",
            "action": turn,
            "observation": "\n".join(observation_lines),
        })
        thoughts = []
        tracker.update(turn, accepted=bool(observation_lines) and observation_lines[0] != "Nothing happens.")
    return {"intro": intro, "goal": goal or goal_sentence(intro), "steps": steps}


def build() -> dict[str, object]:
    react = json.loads(SOURCE.read_text(encoding="utf-8"))

    def example(task_type: str, n: int) -> dict[str, object]:
        source = f"react_{task_type}_{n}"
        annotated = annotate(corrected(source, react[source]), goal=GOALS.get(source))
        return {"source": source, "as_released": AUTHORS.format(type=task_type, n=n), **annotated}

    examples = {task_type: [example(task_type, n) for n in EXAMPLE_IDS] for task_type in TASK_TYPES}
    return {
        "description": "StateAct chain-of-states annotations of ReAct's ALFWorld few-shot examples "
        "(two per task type), with the StateAct authors' corrections; made by scripts/annotate_stateact_alfworld.py",
        "source": SOURCE.name,
        "examples": examples,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description="Annotate ReAct ALFWorld prompts for StateAct.")
    parser.add_argument("--check", action="store_true", help="fail if the file on disk is stale")
    args = parser.parse_args()
    text = json.dumps(build(), indent=1, ensure_ascii=False) + "\n"
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        print("up to date" if current == text else f"{TARGET} is stale; rerun without --check")
        return 0 if current == text else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
