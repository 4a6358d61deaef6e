"""Why an episode or a run stopped: one vocabulary for flows, the decoding monitor, the
chain-of-states loop and every benchmark.

Stores written before this vocabulary used a few other words; :meth:`ExitReason.parse` reads them.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["ExitReason"]


class ExitReason(str, Enum):  # noqa: UP042 - str() stays "ExitReason.X" as before
    """Why a run stopped."""

    FINAL = "final"  # the agent ended it: a final state, `submit`, an answer, the game won
    TURN_LIMIT = "turn_limit"  # the turn limit (see docs/harness.md, "Limits") was reached
    VISIT_LIMIT = "visit_limit"  # a state was entered more often than its visit limit
    TOKEN_LIMIT = "token_limit"  # the token budget was used up
    BUDGET = "token_limit"  # the flow API's older name of TOKEN_LIMIT (an alias)
    TIME_LIMIT = "time_limit"  # the wall-clock limit was reached
    CONTEXT = "context"  # a prompt no longer fitted the model's context window
    ERROR = "error"  # a tool, an LLM or the flow itself failed, and the agent reported it
    CRASHED = "crashed"  # an exception escaped the agent; the harness caught it
    PAUSED = "paused"  # a flow waits for a person (see AskHuman); RunResult.pending asks

    @classmethod
    def parse(cls, value: str) -> ExitReason:
        """``value`` as an exit reason, reading the words of older stores too."""
        return cls(_LEGACY.get(value, value))


# Words older stores used: each benchmark had its own for "the agent ended the episode".
_LEGACY = {
    "answered": "final",
    "won": "final",
    "submitted": "final",
    "no_answer": "final",  # QA: the spec's run ended without an answer state
    "step_limit": "turn_limit",  # ALFWorld's step limit is its turn limit
    "budget": "token_limit",
}
