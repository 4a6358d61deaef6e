"""StateAct's chain of states: how one step (goal, state, thought, action) is written and read.

The text form is appendix E of the StateAct paper, one ``label: value`` line per field::

    >goal: put a hot apple in fridge
    current location: starting location
    current inventory: None
    thought: To solve the task, I need to find and take an apple, ...
    action: go to fridge 1

The JSON form is appendix D's keys as the authors' code writes them (``alfworld_ablation_generator.py``:
``json.dumps(state, indent=2)``, ``""`` for an empty value). The paper's example is not valid JSON
(a bare ``None`` and a missing comma); this reads either. The ablations drop fields: ``no-thought``, ``no-goal`` and
``no-state`` (location and inventory); ``react-joined`` keeps only the thought and the action
(StateAct's "ReAct (joined)": thought + action produced at every turn).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from statebound.errors import DefinitionError

__all__ = ["FIELDS", "VARIANTS", "ChainOfStates", "StateStep"]

FIELDS = ("goal", "location", "inventory", "thought", "action")
_LABELS = {
    "goal": "goal",
    "location": "current location",
    "inventory": "current inventory",
    "thought": "thought",
    "action": "action",
}
_JSON_KEYS = {"goal": "goal", "location": "current_location", "inventory": "current_inventory",
              "thought": "thought", "action": "action"}
_FIELD_OF_LABEL = {label: name for name, label in _LABELS.items()}  # keys: "_" read as " "
_LINE = re.compile(
    r'^\s*>?\s*\{?\s*"?(?P<label>goal|current[ _]location|current[ _]inventory|thought|action)"?\s*:\s*(?P<value>.*)$',
    re.IGNORECASE,
)


_JSON_PAIR = re.compile(r'"(?P<key>[a-z_]+)"\s*:\s*(?P<value>"(?:[^"\\]|\\.)*"|None|null)')


def _field_of(label: str) -> str | None:
    return _FIELD_OF_LABEL.get(" ".join(label.lower().replace("_", " ").split()))


@dataclass(frozen=True, slots=True)
class StateStep:
    """One step as written (fields the variant does not use are None)."""

    action: str
    goal: str | None = None
    location: str | None = None
    inventory: str | None = None
    thought: str | None = None

    @classmethod
    def from_mapping(cls, values: Mapping[str, str | None]) -> StateStep:
        return cls(**{name: values.get(name) for name in FIELDS if name != "action"},
                   action=values.get("action") or "")


@dataclass(frozen=True, slots=True, kw_only=True)
class ChainOfStates:
    """Which fields a step has and whether it is written as text or JSON."""

    fields: tuple[str, ...] = FIELDS
    as_json: bool = False

    def __post_init__(self) -> None:
        unknown = [f for f in self.fields if f not in FIELDS]
        if unknown or "action" not in self.fields:
            raise DefinitionError(f"chain-of-states fields must come from {FIELDS} and include 'action'; got {self.fields}")

    @property
    def tracks_state(self) -> bool:
        return "location" in self.fields and "inventory" in self.fields

    def render(self, step: StateStep) -> str:
        """The step as the model should write it (without the leading ``>``)."""
        values = {name: getattr(step, name) for name in self.fields}
        if self.as_json:
            empty = (None, "None")  # the examples' data writes an empty value as "None"
            return json.dumps({_JSON_KEYS[name]: "" if value in empty else value for name, value in values.items()},
                              indent=2)
        return "\n".join(f"{_LABELS[name]}: {value or 'None'}" for name, value in values.items())

    def parse(self, text: str) -> StateStep:
        """Read a model's step; the action is ``""`` when none was written."""
        values = self._parse_json(text) if self.as_json else None
        if values is None:
            values = {}
            for line in text.splitlines():
                if match := _LINE.match(line):
                    name = _field_of(match["label"]) or ""
                    values.setdefault(name, match["value"].strip().strip('",}').strip())
                    if name == "action":
                        break
        return StateStep.from_mapping(values)

    def cut(self, text: str) -> str:
        """``text`` up to the end of its step (drops an observation the model went on to invent)."""
        if self.as_json:
            end = text.find("}")
            return text[: end + 1].strip() if end >= 0 else text.strip()
        lines = text.strip().splitlines()
        for index, line in enumerate(lines):
            match = _LINE.match(line)
            if match and match["label"].lower() == "action":
                return "\n".join(lines[: index + 1]).strip()
        return text.strip()

    @staticmethod
    def _parse_json(text: str) -> dict[str, str | None] | None:
        """Fields of the first JSON object in ``text``, read leniently (``None``, missing commas)."""
        start, end = text.find("{"), text.find("}")
        if start < 0 or end < start:
            return None
        try:
            data = json.loads(text[start : end + 1])
        except json.JSONDecodeError:
            data = {m["key"]: json.loads(m["value"]) if m["value"].startswith('"') else None
                    for m in _JSON_PAIR.finditer(text[start : end + 1])}
        if not isinstance(data, dict):
            return None
        return {
            _field_of(key) or "": None if value is None else str(value)
            for key, value in data.items()
            if _field_of(key) is not None
        }


VARIANTS: dict[str, ChainOfStates] = {
    "stateact": ChainOfStates(),
    "stateact-no-thought": ChainOfStates(fields=("goal", "location", "inventory", "action")),
    "stateact-no-goal": ChainOfStates(fields=("location", "inventory", "thought", "action")),
    "stateact-no-state": ChainOfStates(fields=("goal", "thought", "action")),
    "stateact-json": ChainOfStates(as_json=True),
    # StateAct's Table 2 baseline "ReAct (joined)": thought and action at every turn, nothing else
    "react-joined": ChainOfStates(fields=("thought", "action")),
}
