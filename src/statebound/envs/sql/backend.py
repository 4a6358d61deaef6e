"""What the SQL environment needs from a database backend: one isolated session per episode."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from statebound.envs.sql.budget import DEFAULT_BUDGET, ResultBudget

__all__ = ["Backend", "QueryFailed", "Rows", "Session"]

Rows = list[tuple[Any, ...]]


class QueryFailed(Exception):
    """A statement failed; ``message`` is the database's own error text (shown to the agent)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class Session(Protocol):
    """A private view of one database for one episode; nothing it does outlives ``close``."""

    def execute(self, sql: str) -> Rows | None:
        """Run one statement: its rows, or None when it returns no result set. Raises QueryFailed.

        Rows are fetched within the session's :class:`ResultBudget`; a result cut short is a
        :class:`~statebound.envs.sql.budget.Fetched` whose ``cut`` says so."""
        ...

    def changes(self) -> int:
        """How much the session's statements changed its database so far (0: nothing)."""
        ...

    def close(self) -> None: ...


class Backend(Protocol):
    name: str

    def databases(self) -> Sequence[str]: ...

    def open_session(self, database: str, *, timeout_s: float,
                     budget: ResultBudget = DEFAULT_BUDGET) -> Session: ...

    def pristine_session(self, database: str, *, timeout_s: float,
                         budget: ResultBudget = DEFAULT_BUDGET) -> Session:
        """A session on ``database`` as no episode changed it (for a gold query only)."""
        ...

    def close(self) -> None: ...
