"""ALFWorld on the real TextWorld engine: one bundled game per episode.

Observations are shown the way ReAct's ALFWorld runner shows them: the task text is the game's
intro without its welcome banner, ``You arrive at X. `` is dropped, and (with ``legacy_put``) the
engine's ``move X to Y`` speaks the prompts' older ``put X in/on Y``. An episode ends when the game
is won or after ``max_steps`` actions (50, as in ReAct and StateAct).
"""

from __future__ import annotations

import threading
from typing import Any

from statebound.envs.alfworld.commands import (
    legacy_command,
    legacy_observation,
    rewrite_action,
    strip_arrival,
)
from statebound.envs.alfworld.games import Game, find_game
from statebound.envs.base import Score, StepResult
from statebound.envs.observation import DEFAULT_MAX_OBSERVATION_CHARS, bound_observation
from statebound.errors import DefinitionError, EnvironmentUnavailable

__all__ = ["FAILED_ACTION", "AlfworldEnv", "task_text"]

FAILED_ACTION = "Nothing happens."  # the engine's answer to any action it does not accept

# TextWorld's PDDL machinery keeps process-wide state: concurrent episodes (the harness runs
# environments in worker threads) take turns inside the engine.
_ENGINE_LOCK = threading.Lock()


def _load_engine(game: Game, *, admissible: bool = False) -> Any:
    """Start TextWorld on ``game`` with ALFWorld's name demangler (imports kept local: heavy);
    ``admissible``: have it list the commands it accepts after every step."""
    try:
        import textworld
        from alfworld.agents.environment.alfred_tw_env import AlfredDemangler
    except ImportError as exc:
        raise EnvironmentUnavailable(
            f"ALFWorld needs the 'alfworld' extra ({exc}); install it with "
            "pip install 'statebound[alfworld]'"
        ) from exc
    infos = textworld.EnvInfos(won=True, admissible_commands=admissible, extras=["walkthrough"])
    with _ENGINE_LOCK:
        return textworld.start(str(game.path), request_infos=infos, wrappers=[AlfredDemangler()])


def task_text(intro: str) -> str:
    """The intro without its banner: the room description, a newline, and ``Your task is to: ...``."""
    return "\n".join(intro.strip().split("\n\n")[1:])


class AlfworldEnv:
    """The :class:`~statebound.envs.base.Environment` for ALFWorld.

    ``correct_put`` turns on StateAct's put correction (``put X in Y`` / ``put X on Y`` accepted);
    ``legacy_put`` (default) accepts and speaks the prompts' ``put X in/on Y``. ``admissible``
    makes :meth:`admissible_commands` available (the engine then lists them after every step).
    ``score().metrics`` counts steps, failed actions and both kinds of rewrite.
    ``max_observation_chars`` bounds every observation, with a note when it cuts.
    """

    max_observation_chars: int | None = DEFAULT_MAX_OBSERVATION_CHARS

    def __init__(
        self, *, max_steps: int = 50, correct_put: bool = False, legacy_put: bool = True,
        split: str = "valid_unseen", admissible: bool = False,
    ) -> None:
        if max_steps < 1:
            raise DefinitionError(f"max_steps must be at least 1, got {max_steps}")
        self.max_steps = max_steps
        self.correct_put = correct_put
        self.legacy_put = legacy_put
        self.split = split
        self.admissible = admissible
        self.game: Game | None = None
        self._engine: Any = None
        self._state: Any = None
        self._reset_counters()

    def _reset_counters(self) -> None:
        self.steps = 0
        self.failed_actions = 0
        self.put_corrections = 0
        self.legacy_puts = 0
        self.won = False

    @property
    def task_type(self) -> str:
        return self._require_game().task_type

    def _require_game(self) -> Game:
        if self.game is None:
            raise DefinitionError("no episode is running; call reset(task_id) first")
        return self.game

    def reset(self, task_id: str) -> str:
        game = find_game(task_id, self.split)
        if self._engine is None or self.game is None or game.path != self.game.path:
            self.close()
            self._engine = _load_engine(game, admissible=self.admissible)
        self.game = game
        self._reset_counters()
        with _ENGINE_LOCK:
            self._state = self._engine.reset()
        return task_text(self._state.feedback)

    def walkthrough(self) -> list[str]:
        """The game's stored expert commands (TextWorld's ``extra.walkthrough`` info)."""
        self._require_game()
        return list(self._state["extra.walkthrough"] or [])

    def admissible_commands(self) -> list[str]:
        """The commands the engine accepts now (``help`` left out), in the form the agent writes
        (``put X in/on Y`` with ``legacy_put``). Needs ``AlfworldEnv(admissible=True)``."""
        if not self.admissible:
            raise DefinitionError("admissible commands were not requested: use AlfworldEnv(admissible=True)")
        self._require_game()
        commands = [c for c in self._state["admissible_commands"] or [] if c != "help"]
        return [legacy_command(c) for c in commands] if self.legacy_put else commands

    def offered_actions(self) -> list[str] | None:
        """What the harness notes beside each action (:class:`~statebound.envs.base.OffersActions`):
        the admissible commands, or ``None`` without ``admissible``."""
        return self.admissible_commands() if self.admissible and self.game is not None else None

    def step(self, action: str) -> StepResult:
        self._require_game()
        if self.won or self.steps >= self.max_steps:
            raise DefinitionError(
                f"the episode is over (won={self.won}, steps={self.steps}); call reset() first"
            )
        rewrite = rewrite_action(action, legacy_put=self.legacy_put, correct_put=self.correct_put)
        self.put_corrections += rewrite.kind == "correction"
        self.legacy_puts += rewrite.kind == "legacy"
        with _ENGINE_LOCK:
            self._state, _, _ = self._engine.step(rewrite.command)
        self.steps += 1
        self.won = bool(self._state["won"])
        observation = strip_arrival(self._state.feedback)
        if self.legacy_put:
            observation = legacy_observation(observation)
        ok = observation != FAILED_ACTION
        self.failed_actions += not ok
        done = self.won or self.steps >= self.max_steps
        info = {"command": rewrite.command, "rewrite": rewrite.kind, "won": self.won, "step": self.steps,
                "limit": done and not self.won}  # the step limit, not the agent, ended the game
        return StepResult(bound_observation(observation, self.max_observation_chars), ok=ok,
                          done=done, info=info)

    def score(self) -> Score:
        metrics = {
            "steps": float(self.steps),
            "failed_actions": float(self.failed_actions),
            "put_corrections": float(self.put_corrections),
            "legacy_puts": float(self.legacy_puts),
        }
        return Score(reward=float(self.won), success=self.won, metrics=metrics)

    def close(self) -> None:
        if self._engine is not None:
            with _ENGINE_LOCK:
                self._engine.close()
            self._engine = None
