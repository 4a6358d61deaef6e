"""One meaning of ``max_turns`` for every benchmark agent: the environment actions an episode may
take (``statebound eval --max-turns``; a benchmark's default when not given). A machine's own
limit on transitions (``Flow(max_turns=...)``) is derived from it here, from how the machine is
shaped: how many states it enters at most per action, and how many outside its action loop.
"""

from __future__ import annotations

from statebound.errors import DefinitionError

__all__ = ["actions_allowed", "transitions_for"]


def actions_allowed(max_turns: int | None) -> int:
    """The episode's action limit as the harness resolved it (the run's ``--max-turns``, else the
    benchmark's default); an agent that needs one and gets none is refused, not given a guess."""
    if max_turns is None:
        raise DefinitionError("this agent needs an action limit: give --max-turns, or a benchmark default_max_turns")
    if max_turns < 1:
        raise DefinitionError(f"max_turns counts environment actions, at least 1, not {max_turns}")
    return max_turns


def transitions_for(actions: int, *, per_action: int = 1, outside: int = 0) -> int:
    """The transitions a machine needs to take ``actions`` environment actions when it enters at
    most ``per_action`` states for each action, and ``outside`` states besides (setting up,
    submitting, ending). The environment's own limit still ends the episode first; this is the
    machine's backstop against a loop that takes no action."""
    return per_action * actions_allowed(actions) + outside
