"""Turns and error rate of an InterCode episode (SQL and Bash), counted once, as StateFlow's Table 1.

The StateFlow runner (``InterCode/experiments/intercode_agent.py`` and ``analysis.py`` in the
authors' repository) counts:

- a **turn** for every action the agent sends: a command, an action it could not parse (answered
  with an error observation, nothing runs) and its own ``submit``. The ``submit`` the runner sends
  when the turn limit is reached is not a turn.
- the **error rate** as the failed share of the actions that reached the environment: every
  executed command (failed when the SQL raised or the shell exited non-zero) and the ``submit``
  (the agent's or the one at the limit), which never fails. Unparsable actions are not in it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ActionTally"]


@dataclass(slots=True)
class ActionTally:
    """What one episode sent to its InterCode environment."""

    turns: int = 0
    executed: int = 0
    failed: int = 0
    invalid: int = 0
    submits: int = 0

    def command(self, *, ok: bool) -> None:
        """The agent's command ran (``ok``: it did not fail)."""
        self.turns += 1
        self.executed += 1
        self.failed += not ok

    def unparsable(self) -> None:
        """The agent sent an action without a command: a turn, not in the error rate."""
        self.turns += 1
        self.invalid += 1

    def submit(self, *, by_agent: bool) -> None:
        """The episode was submitted, by the agent (a turn) or at the turn limit (not one)."""
        self.turns += by_agent
        self.submits += 1

    @property
    def error_rate(self) -> float:
        """Failed commands over executed commands plus submits (0 when nothing reached the environment)."""
        reached = self.executed + self.submits
        return self.failed / reached if reached else 0.0
