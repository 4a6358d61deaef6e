"""The run store: one SQLite file per run directory (``run.sqlite``).

It holds the run's configuration and, per finished episode, its result row, trajectory and events,
keyed by (benchmark, task, agent, model, seed). Episodes are written in transactions (WAL mode; the
runner puts the episodes that finish together in one), so a process killed at any moment leaves
every episode either fully stored or absent, which is what makes ``--resume`` exact.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from statebound.bench.jsonio import dumps, dumps_log
from statebound.bench.plan import EpisodeKey, RunConfig
from statebound.bench.result import EpisodeResult
from statebound.errors import DefinitionError

__all__ = ["STORE_NAME", "ConfigMismatch", "RunNotFound", "RunStore"]

STORE_NAME = "run.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS run (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
    benchmark TEXT NOT NULL,
    task TEXT NOT NULL,
    agent TEXT NOT NULL,
    model TEXT NOT NULL,
    seed INTEGER NOT NULL,
    position INTEGER NOT NULL,
    error TEXT,
    row TEXT NOT NULL,
    trajectory TEXT NOT NULL,
    events TEXT NOT NULL,
    finished_at REAL NOT NULL,
    PRIMARY KEY (benchmark, task, agent, model, seed)
);
"""


class ConfigMismatch(DefinitionError):
    """``--resume`` was asked with a configuration other than the stored one."""


class RunNotFound(DefinitionError):
    """A directory holds no run store."""


class RunStore:
    """``RunStore(run_dir)`` opens (creating if needed) ``run_dir/run.sqlite``."""

    def __init__(self, run_dir: str | Path, *, create: bool = True, read_only: bool = False) -> None:
        """``read_only``: open an existing store without changing a byte of it (reports, status)."""
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / STORE_NAME
        if not self.path.exists() and (not create or read_only):
            raise RunNotFound(f"{self.run_dir} holds no run ({STORE_NAME} missing); pass a directory made by 'statebound eval'")
        if read_only:
            self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None, timeout=30)
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- configuration -------------------------------------------------------------------
    def config(self) -> RunConfig | None:
        row = self._db.execute("SELECT value FROM run WHERE key = 'config'").fetchone()
        return RunConfig.from_json(json.loads(row[0])) if row else None

    def start(self, config: RunConfig, *, resume: bool) -> None:
        """Record ``config`` for a new run, or check it against the stored one when resuming."""
        stored = self.config()
        if stored is None:
            with self._transaction():
                self._db.execute("INSERT INTO run VALUES ('config', ?)", (dumps(config.to_json()),))
                self._db.execute("INSERT OR REPLACE INTO run VALUES ('created_at', ?)", (str(time.time()),))
            return
        if not resume:
            raise ConfigMismatch(
                f"{self.run_dir} already holds a run; pass --resume to continue it or choose another --out"
            )
        old, new = stored.to_json(), config.to_json()
        differences = [key for key in new if old.get(key) != new.get(key)]
        if differences:
            details = "; ".join(f"{key}: stored {old.get(key)!r}, given {new.get(key)!r}" for key in differences)
            raise ConfigMismatch(
                f"cannot resume {self.run_dir}: the configuration differs ({details}). "
                "Repeat the original command with --resume, or choose another --out"
            )

    # --- episodes ------------------------------------------------------------------------
    def save(self, result: EpisodeResult, *, benchmark: str, position: int) -> None:
        """Store one finished episode atomically (replacing a stored one with the same key)."""
        self.save_many([(result, position)], benchmark=benchmark)

    def save_many(self, finished: Sequence[tuple[EpisodeResult, int]], *, benchmark: str) -> None:
        """Store ``(result, position)`` pairs in one transaction: all of them or none."""
        now = time.time()
        rows = [
            (benchmark, result.task, result.agent, result.model, result.seed, position, result.error,
             dumps(result.row()), dumps_log(result.trajectory), dumps_log(result.events), now)
            for result, position in finished
        ]
        with self._transaction():
            self._db.executemany("INSERT OR REPLACE INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def finished(self, *, include_errors: bool = True) -> set[EpisodeKey]:
        """Keys of stored episodes (optionally leaving out crashed ones, to run them again)."""
        query = "SELECT benchmark, task, agent, model, seed FROM episodes"
        if not include_errors:
            query += " WHERE error IS NULL"
        return {EpisodeKey(*row) for row in self._db.execute(query)}

    def results(self, *, with_trajectories: bool = False) -> list[EpisodeResult]:
        """Every stored episode in run order."""
        columns = "row, trajectory, events" if with_trajectories else "row, '[]', '[]'"
        rows = self._db.execute(f"SELECT {columns} FROM episodes ORDER BY position")
        return [self._result(*row) for row in rows]

    def episodes(
        self, *, task: str, agent: str | None = None, model: str | None = None, seed: int | None = None
    ) -> list[EpisodeResult]:
        """Stored episodes of ``task`` with their trajectories, optionally narrowed down."""
        query = "SELECT row, trajectory, events FROM episodes WHERE task = ?"
        params: list[Any] = [task]
        for column, value in (("agent", agent), ("model", model), ("seed", seed)):
            if value is not None:
                query += f" AND {column} = ?"
                params.append(value)
        return [self._result(*row) for row in self._db.execute(query + " ORDER BY position", params)]

    def episode_stats(self) -> dict[tuple[str, str], tuple[int, int, float | None, float | None]]:
        """Per (agent, model): episodes stored, crashed ones, mean wall seconds of the others, and
        when the last one was stored (Unix time)."""
        rows = self._db.execute(
            "SELECT agent, model, count(*), sum(error IS NOT NULL),"
            " avg(CASE WHEN error IS NULL THEN json_extract(row, '$.wall_seconds') END),"
            " max(finished_at) FROM episodes GROUP BY agent, model"
        )
        return {(agent, model): (stored, crashed or 0, mean, last) for agent, model, stored, crashed, mean, last in rows}

    def iter_trajectories(self) -> Iterator[EpisodeResult]:
        """Episodes one at a time, with trajectories (for exports of large runs)."""
        for row in self._db.execute("SELECT row, trajectory, events FROM episodes ORDER BY position"):
            yield self._result(*row)

    @staticmethod
    def _result(row: str, trajectory: str, events: str) -> EpisodeResult:
        return EpisodeResult(**json.loads(row), trajectory=json.loads(trajectory), events=json.loads(events))

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
