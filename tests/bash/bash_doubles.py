"""Test helpers: a real-sandbox skip marker and a scripted stand-in for BashEnv."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from statebound.envs.base import StepResult
from statebound.errors import EnvironmentUnavailable


def _sandbox_problem() -> str | None:
    from statebound.envs.bash.sandbox import check_sandbox

    try:
        check_sandbox()
    except EnvironmentUnavailable as exc:
        return str(exc)
    return None


needs_sandbox = pytest.mark.skipif(
    (problem := _sandbox_problem()) is not None, reason=f"bubblewrap sandbox unavailable: {problem}"
)


@dataclass
class FakeBashEnv:
    """Answers ``execute[...]`` actions with queued (observation, ok) pairs; records every action."""

    results: list[tuple[str, bool]]
    actions: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue = deque(self.results)

    def step(self, action: str) -> StepResult:
        self.actions.append(action)
        if action.strip() == "submit":
            return StepResult(observation="", done=True)
        observation, ok = self._queue.popleft()
        return StepResult(observation=observation, ok=ok)


@contextmanager
def sandboxed_episode(limits: object, task: str = "1-0") -> Iterator[object]:
    """A real Bash environment with ``limits``, reset to ``task``, closed afterwards."""
    from statebound.envs.bash import BashEnv

    environment = BashEnv(limits=limits)  # type: ignore[arg-type]
    environment.reset(task)
    try:
        yield environment
    finally:
        environment.close()
