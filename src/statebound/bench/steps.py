"""The environment's side of an episode, noted by the harness whatever the agent.

The agent gets its environment behind a :class:`StepRecorder`: every attribute and method is the
environment's own, and each ``step(action)`` is noted as a :class:`~statebound.contract.trace.Step`
with the candidates the environment offered just before it (an environment that can list them
implements :class:`~statebound.envs.base.OffersActions`: ALFWorld's admissible commands). So a
walkthrough, a replay and a model agent leave the same record, and any run store can teach a
machine (:mod:`statebound.induce`).
"""

from __future__ import annotations

from typing import Any

from statebound.contract.trace import Step
from statebound.envs.base import OffersActions, StepResult

__all__ = ["StepRecorder"]


class StepRecorder:
    """``env`` as the agent sees it, with ``steps`` noting what was offered, sent and answered."""

    def __init__(self, env: Any) -> None:
        object.__setattr__(self, "_env", env)
        object.__setattr__(self, "steps", [])

    def step(self, action: str) -> StepResult:
        offered = self._env.offered_actions() if isinstance(self._env, OffersActions) else None
        result: StepResult = self._env.step(action)
        self.steps.append(Step(action=action, observation=result.observation, ok=result.ok,
                               offered=None if offered is None else tuple(offered)))
        return result

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance sees the environment: a flow's typed deps accept it
        return type(self._env)

    def __getattr__(self, name: str) -> Any:  # everything else is the environment's own
        return getattr(self._env, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._env, name, value)
