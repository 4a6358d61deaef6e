"""InterCode-Bash as an :class:`~statebound.envs.base.Environment` over the bubblewrap sandbox."""

from __future__ import annotations

import shlex

from statebound.envs.base import Score, StepResult
from statebound.envs.bash.actions import INVALID_ACTION_OBSERVATION, parse_action
from statebound.envs.bash.fsdiff import Entry, git_status, snapshot
from statebound.envs.bash.reward import BashReward, bash_reward
from statebound.envs.bash.sandbox import CommandResult, Sandbox, SandboxLimits
from statebound.envs.bash.testbed import BashTask, get_task
from statebound.envs.intercode_tally import ActionTally
from statebound.envs.observation import DEFAULT_MAX_OBSERVATION_CHARS, bound_observation
from statebound.errors import DefinitionError

__all__ = ["TIMEOUT_OBSERVATION", "BashEnv", "unrunnable"]

TIMEOUT_OBSERVATION = "Command timed out"  # upstream's observation for a command past the limit
OBSERVATION_CHARS = 350  # what the StateFlow/InterCode runners show the model of one output


def unrunnable(command: str) -> str | None:
    """Why ``command`` cannot be handed to a shell (an invalid action), or ``None``: a NUL byte ends
    a command line's string before it is run, and text that is not UTF-8 (a lone surrogate) cannot
    be written as bytes at all."""
    if "\x00" in command:
        return "Error executing command: it contains a NUL byte (\\x00), which no shell command can hold; nothing ran"
    try:
        command.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as error:
        return (f"Error executing command: character {error.object[error.start]!r} at {error.start} is not text a "
                "shell can take; nothing ran")
    return None


def _observation(result: CommandResult) -> str:
    notes = "".join(f"\n[{note}]" for note in result.limits_hit)
    if result.timed_out:
        return TIMEOUT_OBSERVATION + notes
    if result.truncated:
        return result.output + "\n[output truncated: the command was stopped]" + notes
    return result.output + notes


class BashEnv:
    """One InterCode-Bash episode at a time, in a fresh sandbox per :meth:`reset`.

    ``step`` takes ``execute[<command>]`` or ``submit``. The observation returned to the agent is
    cut to ``observation_chars`` (350, as upstream's runners do; ``None`` keeps it whole); the full
    output is what :meth:`score` grades. ``score`` runs the gold command in a second sandbox.
    ``tally`` counts turns and the error rate as StateFlow's Table 1 does
    (:mod:`statebound.envs.intercode_tally`); :meth:`submit_at_limit` is the harness's submit.
    ``max_observation_chars`` bounds every observation, with a note when it cuts (it matters
    when ``observation_chars`` is None).
    """

    max_observation_chars: int | None = DEFAULT_MAX_OBSERVATION_CHARS

    def __init__(
        self,
        *,
        limits: SandboxLimits | None = None,
        observation_chars: int | None = OBSERVATION_CHARS,
    ) -> None:
        self.limits = limits or SandboxLimits()
        self.observation_chars = observation_chars
        self.task: BashTask | None = None
        self._sandbox: Sandbox | None = None
        self._pristine: dict[str, Entry] = {}
        self._last_output: str | None = None
        self.tally = ActionTally()
        self.submitted = False
        self._score: tuple[Score, BashReward] | None = None

    # -- Environment protocol ------------------------------------------------------------------

    def reset(self, task_id: str) -> str:
        task = get_task(task_id)
        self.close()
        self._sandbox = Sandbox(fs=task.fs, limits=self.limits)
        self._pristine = snapshot(self._sandbox.root)
        self.task = task
        self._last_output = task.query  # upstream scores the task text if nothing ran
        self.tally = ActionTally()
        self.submitted = False
        self._score = None
        return task.query

    def step(self, action: str) -> StepResult:
        sandbox = self._require_episode()
        parsed = parse_action(action)
        if parsed.kind == "submit":
            return self._submit(by_agent=True)
        refusal = INVALID_ACTION_OBSERVATION if parsed.kind == "invalid" else unrunnable(parsed.command)
        if refusal is not None:
            self.tally.unparsable()
            return StepResult(observation=refusal, ok=False, info={"executed": False})
        result = sandbox.run(parsed.command)
        self._score = None
        self.tally.command(ok=result.ok)
        self._last_output = _observation(result)
        info = {"executed": True, "exit_code": result.exit_code, "timed_out": result.timed_out,
                "truncated": result.truncated, "cwd": sandbox.cwd}  # fmt: skip
        return StepResult(observation=self._cap(self._last_output), ok=result.ok, info=info)

    def score(self) -> Score:
        return self.grade()[0]

    def submit_at_limit(self) -> StepResult:
        """Submit the episode as it stands, as the runner does at the turn limit (not a turn)."""
        self._require_episode()
        return self._submit(by_agent=False)

    def _submit(self, *, by_agent: bool) -> StepResult:
        self.submitted = True
        self.tally.submit(by_agent=by_agent)
        self._score = None
        return StepResult(observation=self._cap(self._last_output or ""), done=True, info={"submitted": True})

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    # -- extras --------------------------------------------------------------------------------

    @property
    def error_rate(self) -> float:
        """Failed commands over executed commands plus submits (:mod:`statebound.envs.intercode_tally`)."""
        return self.tally.error_rate

    @property
    def turns(self) -> int:
        """Actions the agent sent: commands, unparsable actions and its own ``submit``."""
        return self.tally.turns

    @property
    def last_output(self) -> str | None:
        """The full output of the last executed command (the task text before any)."""
        return self._last_output

    def grade(self) -> tuple[Score, BashReward]:
        """The score and the reward's parts (missing and extra changes included)."""
        if self._score is None:
            self._score = self._grade()
        return self._score

    def _grade(self) -> tuple[Score, BashReward]:
        sandbox = self._require_episode()
        assert self.task is not None
        agent_changes = git_status(self._pristine, snapshot(sandbox.root))
        with Sandbox(fs=self.task.fs, limits=self.limits) as gold_box:
            # Same limits and the same observation rules as the agent's commands (upstream gives
            # the gold command no time limit; here a gold run past 10 s reads "Command timed out").
            gold_output = _observation(gold_box.run(self.task.gold, cwd="/"))
            gold_changes = git_status(self._pristine, snapshot(gold_box.root))

            def md5_agrees(path: str) -> bool:
                command = f"md5sum {shlex.quote(path)}"
                return sandbox.run(command, cwd="/").output == gold_box.run(command, cwd="/").output

            reward = bash_reward(
                agent_changes=agent_changes, gold_changes=gold_changes,
                agent_output=self._last_output, gold_output=gold_output, md5_agrees=md5_agrees,
            )  # fmt: skip
        # what a command that changes nothing and prints nothing would score (no change in common,
        # so no checksum is compared): upstream's reward gives some tasks full marks for that
        nothing = bash_reward(agent_changes=(), gold_changes=gold_changes, agent_output="",
                              gold_output=gold_output, md5_agrees=lambda path: True)
        metrics = {"error_rate": self.error_rate, "p1": reward.p1, "p2": reward.p2, "p3": reward.p3,
                   "executed": float(self.tally.executed), "gold_informative": float(not nothing.success)}  # fmt: skip
        return Score(reward=reward.reward, success=reward.success, metrics=metrics), reward

    def _cap(self, text: str) -> str:
        shown = text if self.observation_chars is None else text[: self.observation_chars]
        return bound_observation(shown, self.max_observation_chars)

    def _require_episode(self) -> Sandbox:
        if self._sandbox is None:
            raise DefinitionError("no episode is running; call reset(task_id) first")
        return self._sandbox
