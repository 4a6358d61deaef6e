"""Choice states (the names this module always gave): :class:`Pick`, the output function
(:mod:`statebound.flow.outputs.pick`), with how a choice is made and recorded
(:mod:`statebound.flow.choosing`)."""

from __future__ import annotations

from statebound.flow.choosing import (
    ChoiceMethod,
    Chooser,
    ChooserKind,
    Picked,
    PromptFn,
    choice_grammar,
    choice_schema,
    grammar_choice,
    is_choice_grammar,
    last_pick,
    offered,
    picks,
    prompt_text,
)
from statebound.flow.outputs.pick import Pick

__all__ = [
    "ChoiceMethod",
    "ChooserKind",
    "Chooser",
    "Pick",
    "Picked",
    "PromptFn",
    "choice_grammar",
    "choice_schema",
    "grammar_choice",
    "is_choice_grammar",
    "last_pick",
    "offered",
    "picks",
    "prompt_text",
]
