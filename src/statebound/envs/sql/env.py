"""InterCode-SQL as an :class:`~statebound.envs.base.Environment`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from statebound.envs.base import Score, StepResult
from statebound.envs.intercode_tally import ActionTally
from statebound.envs.observation import DEFAULT_MAX_OBSERVATION_CHARS, bound_observation
from statebound.envs.sql.actions import INVALID_ACTION_OBSERVATION, format_observation, parse_action
from statebound.envs.sql.backend import Backend, QueryFailed, Rows, Session
from statebound.envs.sql.budget import DEFAULT_BUDGET, Fetched, ResultBudget
from statebound.envs.sql.reward import informative, sql_reward
from statebound.envs.sql.tasks import SqlTask, load_tasks
from statebound.errors import DefinitionError

__all__ = ["ERROR_PREFIX", "GoldOn", "SqlEnvironment", "open_backend"]

ERROR_PREFIX = "Error executing query: "
GoldOn = Literal["episode", "pristine"]


def open_backend(kind: Literal["sqlite", "mysql"] | str = "sqlite", *,
                 cache_dir: Path | str | None = None) -> Backend:
    """``sqlite`` (embedded, converted and cached at first use) or ``mysql`` (scripts/mariadb.sh)."""
    if kind == "sqlite":
        from statebound.envs.sql.sqlite_backend import SqliteBackend

        return SqliteBackend(cache_dir=cache_dir)
    if kind == "mysql":
        from statebound.envs.sql.mysql_backend import MySqlBackend

        return MySqlBackend(databases=sorted({t.db for t in load_tasks()}))
    raise DefinitionError(f"unknown SQL backend {kind!r}: use 'sqlite' or 'mysql'")


@dataclass(slots=True)
class _Episode:
    task: SqlTask
    session: Session
    last_result: Rows | str | None  # what `submit` scores: rows, an error string, or the task text
    tally: ActionTally = field(default_factory=ActionTally)
    submitted: bool = False
    score: Score | None = None


class SqlEnvironment:
    """One episode at a time on one task; every episode sees a private copy of its database.

    ``max_obs_chars`` / ``max_obs_rows`` cap what the agent sees (StateFlow: 350 characters, 25
    rows); scoring uses the result as fetched. ``result_budget`` caps what is fetched (rows and
    bytes of rendered result; the defaults keep every gold result whole) and
    ``max_observation_chars`` caps every observation; both say so when they cut. After
    ``max_turns`` actions the episode is submitted as it stands. ``gold_on``: where the gold query
    runs when the episode is graded: in the episode's own database as the agent left it
    (``"episode"``, upstream's), or on an untouched copy (``"pristine"``); ``changed_data`` in the
    score's metrics says whether the agent changed its database.
    """

    def __init__(self, *, backend: Backend | str = "sqlite", max_turns: int | None = 10,
                 max_obs_chars: int | None = 350, max_obs_rows: int | None = 25,
                 timeout_s: float = 10.0, result_budget: ResultBudget = DEFAULT_BUDGET,
                 max_observation_chars: int | None = DEFAULT_MAX_OBSERVATION_CHARS,
                 gold_on: GoldOn = "episode") -> None:
        if gold_on not in ("episode", "pristine"):
            raise DefinitionError(f"gold_on must be 'episode' or 'pristine', not {gold_on!r}")
        self.gold_on = gold_on
        self._owns_backend = isinstance(backend, str)
        self.backend = open_backend(backend) if isinstance(backend, str) else backend
        self.max_turns = max_turns
        self.max_obs_chars = max_obs_chars
        self.max_obs_rows = max_obs_rows
        self.timeout_s = timeout_s
        self.result_budget = result_budget
        self.max_observation_chars = max_observation_chars
        self._tasks = {task.id: task for task in load_tasks()}
        self._episode: _Episode | None = None

    @property
    def task(self) -> SqlTask:
        return self._current().task

    def reset(self, task_id: str) -> str:
        if task_id not in self._tasks:
            raise DefinitionError(
                f"unknown InterCode-SQL task {task_id!r}: ids are '0' to '{len(self._tasks) - 1}'")
        self._end_episode()
        task = self._tasks[task_id]
        session = self.backend.open_session(task.db, timeout_s=self.timeout_s,
                                            budget=self.result_budget)
        self._episode = _Episode(task=task, session=session, last_result=task.query)
        return task.query

    def step(self, action: str) -> StepResult:
        episode = self._current()
        if episode.submitted:
            return StepResult("The episode is over (already submitted).", ok=False, done=True)
        parsed = parse_action(action.strip())
        if parsed.kind == "submit":
            score = self._submit(episode, by_agent=True)
            return StepResult(self._show(episode.last_result), done=True,
                              info={"action": "submit", "reward": score.reward})
        if parsed.kind == "invalid":
            episode.tally.unparsable()
            result: StepResult = StepResult(INVALID_ACTION_OBSERVATION, ok=False,
                                            info={"action": "invalid"})
        else:
            result = self._execute(episode, parsed.sql)
        if self.max_turns is not None and episode.tally.turns >= self.max_turns:
            score = self._submit(episode, by_agent=False)
            return StepResult(result.observation, ok=result.ok, done=True,
                              info={**result.info, "auto_submitted": True, "reward": score.reward})
        return result

    def score(self) -> Score:
        episode = self._current()
        return episode.score if episode.score is not None else self._grade(episode)

    def close(self) -> None:
        self._end_episode()
        if self._owns_backend:  # a backend passed in is shared; its owner closes it
            self.backend.close()

    # -- helpers ------------------------------------------------------------------------------
    def _execute(self, episode: _Episode, sql: str) -> StepResult:
        try:
            rows = episode.session.execute(sql)
        except QueryFailed as err:
            episode.tally.command(ok=False)
            episode.last_result = ERROR_PREFIX + err.message
            return StepResult(self._show(episode.last_result), ok=False,
                              info={"action": "execute", "sql": sql, "error": err.message})
        episode.tally.command(ok=True)
        episode.last_result = rows
        info = {"action": "execute", "sql": sql, "rows": None if rows is None else len(rows)}
        cut = rows.cut if isinstance(rows, Fetched) else None
        if cut is None:
            return StepResult(self._show(rows), info=info)
        return StepResult(f"{self._show(rows)}\n[{cut}]", info={**info, "cut": cut})

    def _submit(self, episode: _Episode, *, by_agent: bool) -> Score:
        episode.tally.submit(by_agent=by_agent)
        episode.submitted = True
        episode.score = self._grade(episode)
        return episode.score

    def _grade(self, episode: _Episode) -> Score:
        """Upstream: the gold query runs now, in the episode's own (possibly changed) database;
        with ``gold_on="pristine"``, on an untouched copy of it."""
        changed = episode.session.changes() > 0
        pristine = self.gold_on == "pristine"
        session = (self.backend.pristine_session(episode.task.db, timeout_s=self.timeout_s, budget=self.result_budget)
                   if pristine else episode.session)
        try:
            gold_rows: Rows | None = session.execute(episode.task.gold) or []
        except QueryFailed:
            gold_rows = []
        finally:
            if pristine:
                session.close()
        agent_rows = episode.last_result if isinstance(episode.last_result, list) else None
        reward = sql_reward(agent_rows, gold_rows)
        tally = episode.tally  # turns and error rate as StateFlow's Table 1 counts them
        metrics = {
            "error_rate": tally.error_rate,
            "turns": float(tally.turns),
            "executed": float(tally.executed),
            "failed": float(tally.failed),
            "invalid_actions": float(tally.invalid),
            "gold_informative": float(informative(gold_rows)),
            "changed_data": float(changed),
        }
        return Score(reward=reward, success=reward == 1, metrics=metrics)

    def _show(self, result: Rows | str | None) -> str:
        shown = format_observation(result, max_chars=self.max_obs_chars, max_rows=self.max_obs_rows)
        return bound_observation(shown, self.max_observation_chars)

    def _current(self) -> _Episode:
        if self._episode is None:
            raise DefinitionError("call reset(task_id) before step() or score()")
        return self._episode

    def _end_episode(self) -> None:
        if self._episode is not None:
            self._episode.session.close()
            self._episode = None
