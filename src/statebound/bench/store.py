"""The run store: one SQLite file per run directory (``run.sqlite``).

It holds the run's configuration and, per finished episode, its result row, trajectory and events,
and the environment's side (the task text and the steps with what was offered, in ``environment``:
a column added to stores made before it, which read as having none), keyed by (benchmark, task, agent, model, seed). Episodes are written in transactions (WAL mode; the
runner puts the episodes that finish together in one), so a process killed at any moment leaves
every episode either fully stored or absent, which is what makes ``--resume`` exact. A writer
that closes the store folds the log back into the file, so a finished run is one file, and a
reader (a report, ``status``) leaves no log files behind either.

Which configurations a store accepts (:func:`admit`): a fresh run takes a directory without a run
or whose run has no episode yet; ``--resume`` takes a run with the same identity
(:mod:`statebound.bench.identity`), with the models' transport options free to change, or the
same run grown by agents, models or seeds (only their episodes run). :func:`check_run_dir` asks
the same before anything is written.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from statebound.bench.identity import (
    ConfigMismatch,
    extended,
    identity_differences,
    in_stored_order,
    transport_changes,
)
from statebound.bench.jsonio import dumps, dumps_log, escape_surrogates
from statebound.bench.packed import (
    STORE_NAME,
    has_store,
    packed_store,
    readable_copy,
    run_dirs_below,
    unpack_in_place,
)
from statebound.bench.plan import EpisodeKey, RunConfig
from statebound.bench.run_files import Declared, declared_of, run_files
from statebound.contract.result import EpisodeResult
from statebound.errors import DefinitionError
from statebound.sqlite_files import reader

__all__ = ["STORE_NAME", "ConfigMismatch", "RunNotFound", "RunStore", "admit", "check_run_dir", "no_run_in"]

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
    environment TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (benchmark, task, agent, model, seed)
);
"""
_COLUMNS = "benchmark, task, agent, model, seed, position, error, row, trajectory, events, finished_at, environment"
_NO_ENVIRONMENT = "'{}'"  # what a store made before the column reads as


class RunNotFound(DefinitionError):
    """A directory holds no run store."""


def no_run_in(path: Path, *, below: bool = False) -> RunNotFound:
    """The error for ``path`` holding no run (``below``: nor any folder under it), naming the run
    directories beside it when there are some."""
    if not path.exists():
        problem = "does not exist"
    elif below:
        problem = f"holds no run ({STORE_NAME} missing, here or below)"
    else:
        problem = f"holds no run ({STORE_NAME} missing)"
    parent = path.parent
    runs = [run.name for run in run_dirs_below(parent) if run.parent == parent] if parent.is_dir() else []
    beside = f"; run directories in {parent}: {', '.join(runs[:8])}{', ...' if len(runs) > 8 else ''}" if runs else ""
    return RunNotFound(f"{path} {problem}{beside}; pass a directory made by 'statebound eval'")


def admit(stored: RunConfig | None, given: RunConfig, *, has_episodes: bool, resume: bool,
          run_dir: Path) -> RunConfig:
    """The configuration to run ``given`` with in a store holding ``stored``, or the error that
    says why the store cannot take it. A store without episodes takes any configuration (nothing
    would be lost), so a failed start never blocks the directory."""
    if stored is None:
        if resume:
            raise RunNotFound(f"nothing to resume in {run_dir}: it holds no run yet; "
                              "drop --resume to start the run there")
        return given
    if not has_episodes:
        return given
    if not resume:
        raise ConfigMismatch(
            f"{run_dir} already holds a run; pass --resume to continue it or choose another --out"
        )
    if not identity_differences(stored, given):
        return in_stored_order(given, stored)
    if (grown := extended(stored, given)) is not None:
        return grown
    differences = identity_differences(stored, given)
    raise ConfigMismatch(
        f"cannot resume {run_dir}: the configuration differs ({'; '.join(differences)}). "
        f"Agents, models and seeds may be added; for the rest, statebound eval --out {run_dir} --resume "
        "runs the stored configuration, or choose another --out"
    )


def check_run_dir(run_dir: str | Path, config: RunConfig, *, resume: bool) -> RunConfig:
    """The configuration the run in ``run_dir`` will run (``config``, or the stored run grown by
    it); refused, before anything is written, for a directory that cannot take ``config``: a file
    in its place, ``--resume`` of a directory without a run, a run it cannot continue."""
    path = Path(run_dir)
    if path.exists() and not path.is_dir():
        raise DefinitionError(f"{path} is a file, not a run directory: choose another --out")
    if not has_store(path):
        if resume:
            missing = "does not exist" if not path.exists() else f"holds no {STORE_NAME}"
            raise RunNotFound(f"nothing to resume in {path}: it {missing}; check the path, "
                              "or drop --resume to start a new run there")
        return config
    with RunStore(path, read_only=True) as store:
        return admit(store.config(), config, has_episodes=store.has_episodes(), resume=resume, run_dir=path)


class RunStore:
    """``RunStore(run_dir)`` opens (creating if needed) ``run_dir/run.sqlite``; a packed store
    (``run.sqlite.xz``, :mod:`statebound.bench.packed`) is read through a decompressed copy, and
    unpacked in place for writing."""

    def __init__(self, run_dir: str | Path, *, create: bool = True, read_only: bool = False) -> None:
        """``read_only``: open an existing store without writing to it (reports, status): a finished
        store's bytes stay the same; a killed writer's log is folded in (:func:`statebound.sqlite_files.reader`)."""
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / STORE_NAME
        if not self.path.exists() and packed_store(self.run_dir).is_file():  # a committed record
            self.path = readable_copy(packed_store(self.run_dir)) if read_only else unpack_in_place(self.run_dir)
        if not self.path.exists() and (not create or read_only):
            raise no_run_in(self.run_dir)
        self._writer = not read_only
        self._copy: tempfile.TemporaryDirectory[str] | None = None  # what a reader reads in a read-only place
        try:
            if read_only:
                self._db, self._copy = reader(self.path)
                try:
                    _check_schema(self._db, self.path)
                except RunNotFound:
                    self.close()
                    raise
                self._environment = "environment" if _has_environment(self._db) else _NO_ENVIRONMENT
                return
            self.run_dir.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                _create(self.path)
            self._db = sqlite3.connect(self.path, isolation_level=None, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            if not _has_environment(self._db):  # a store made before the column
                self._db.execute(f"ALTER TABLE episodes ADD COLUMN environment TEXT NOT NULL DEFAULT {_NO_ENVIRONMENT}")
            self._environment = "environment"
        except sqlite3.DatabaseError as error:
            raise RunNotFound(f"{self.path} is not a run store ({error})") from None
        except OSError as error:
            raise DefinitionError(f"cannot use {self.run_dir} as a run directory: {error.strerror}") from None

    def close(self) -> None:
        """Close; a writer first folds the write-ahead log into the file (unless another process
        has the store open), so no ``-wal``/``-shm`` files stay behind."""
        if self._writer:
            try:
                self._db.execute("PRAGMA journal_mode=DELETE")
            except sqlite3.OperationalError:  # another connection reads or writes it: leave WAL on
                pass
        self._db.close()
        if self._copy is not None:
            self._copy.cleanup()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- configuration -------------------------------------------------------------------
    def diagrams(self) -> dict[str, str]:
        """Each flow agent's diagram (DOT), as drawn when the run was made."""
        rows = self._db.execute("SELECT key, value FROM run WHERE key LIKE 'diagram:%'").fetchall()
        return {key.removeprefix("diagram:"): value for key, value in rows}

    def save_diagram(self, agent: str, dot: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO run VALUES (?, ?)", (f"diagram:{agent}", dot))

    def config(self) -> RunConfig | None:
        row = self._db.execute("SELECT value FROM run WHERE key = 'config'").fetchone()
        return RunConfig.from_json(json.loads(row[0])) if row else None

    def start(self, config: RunConfig, *, resume: bool) -> tuple[RunConfig, list[str]]:
        """Record ``config`` for a new run, or check it against the stored one when resuming
        (:func:`admit`). Returns the configuration to run (in the stored order) and the transport
        options that changed since the stored run; the store then records the new ones, and the
        old ones with the time they were last used under ``transport_history``."""
        stored = self.config()
        config = admit(stored, config, has_episodes=self.has_episodes(), resume=resume, run_dir=self.run_dir)
        changes = transport_changes(stored, config) if stored is not None else []
        files, declared = run_files(config, self.run_dir), declared_of(config.benchmark)
        unchanged = stored is not None and not changes and stored.to_json() == config.to_json()
        if unchanged and not files:
            return config, []
        with self._transaction():
            if changes:
                history = json.loads(self._value("transport_history") or "[]")
                history.append({"until": time.time(), "models": [m.to_json() for m in stored.models]})  # type: ignore[union-attr]
                self._db.execute("INSERT OR REPLACE INTO run VALUES ('transport_history', ?)", (dumps(history),))
            if not unchanged:
                self._db.execute("INSERT OR REPLACE INTO run VALUES ('config', ?)", (dumps(config.to_json()),))
            if stored is None:
                self._db.execute("INSERT OR REPLACE INTO run VALUES ('created_at', ?)", (str(time.time()),))
            if files:  # where the run's files are now, and what readers need of its benchmark
                self._db.execute("INSERT OR REPLACE INTO run VALUES ('files', ?)", (dumps(files),))
            if declared is not None:
                self._db.execute("INSERT OR REPLACE INTO run VALUES ('declared', ?)", (dumps(declared.to_json()),))
        return config, changes

    def files(self) -> dict[str, dict[str, str]]:
        """Where the run's user files were when it last ran (:func:`~statebound.bench.run_files.run_files`)."""
        return json.loads(self._value("files") or "{}")

    def declared(self) -> Declared | None:
        """What the run's benchmark declares for reports, when it is a user's file (else ``None``)."""
        value = self._value("declared")
        return None if value is None else Declared.from_json(json.loads(value))

    def _value(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM run WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def has_episodes(self) -> bool:
        return self._db.execute("SELECT 1 FROM episodes LIMIT 1").fetchone() is not None

    def crash_causes(self) -> list[tuple[str, int]]:
        """The errors of the stored crashed episodes with how many share each, most common first."""
        rows = self._db.execute(
            "SELECT error, count(*) AS n FROM episodes WHERE error IS NOT NULL GROUP BY error ORDER BY n DESC, error"
        )
        return [(error, count) for error, count in rows]

    # --- episodes ------------------------------------------------------------------------
    def save(self, result: EpisodeResult, *, benchmark: str, position: int) -> None:
        """Store one finished episode atomically (replacing a stored one with the same key)."""
        self.save_many([(result, position)], benchmark=benchmark)

    def save_many(self, finished: Sequence[tuple[EpisodeResult, int]], *, benchmark: str) -> None:
        """Store ``(result, position)`` pairs in one transaction: all of them or none."""
        now = time.time()
        rows = [
            (benchmark, result.task, result.agent, result.model, result.seed, position, escape_surrogates(result.error),
             dumps(result.row()), dumps_log(result.trajectory), dumps_log(result.events), now,
             dumps_log({"task_text": result.task_text, "steps": result.env_steps}))
            for result, position in finished
        ]
        with self._transaction():
            self._db.executemany(f"INSERT OR REPLACE INTO episodes ({_COLUMNS}) VALUES ({', '.join('?' * 12)})", rows)

    def finished(self, *, include_errors: bool = True) -> set[EpisodeKey]:
        """Keys of stored episodes (optionally leaving out crashed ones, to run them again)."""
        query = "SELECT benchmark, task, agent, model, seed FROM episodes"
        if not include_errors:
            query += " WHERE error IS NULL"
        return {EpisodeKey(*row) for row in self._db.execute(query)}

    def results(self, *, with_trajectories: bool = False) -> list[EpisodeResult]:
        """Every stored episode in run order."""
        columns = f"row, trajectory, events, {self._environment}" if with_trajectories else "row, '[]', '[]', '{}'"
        rows = self._db.execute(f"SELECT {columns} FROM episodes ORDER BY position")
        return [self._result(*row) for row in rows]

    def episodes(
        self, *, task: str, agent: str | None = None, model: str | None = None, seed: int | None = None
    ) -> list[EpisodeResult]:
        """Stored episodes of ``task`` with their trajectories, optionally narrowed down."""
        query = f"SELECT row, trajectory, events, {self._environment} FROM episodes WHERE task = ?"
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

    def task_texts(self, *, chars: int = 200) -> dict[str, str]:
        """Each stored task's text as an agent was given it (its first entry from the task, else its
        first user entry), cut to ``chars`` characters; read from one episode per task."""
        rows = self._db.execute(
            "SELECT e.task, (SELECT substr(json_extract(j.value, '$.content'), 1, ?) FROM json_each(e.trajectory) j"
            " WHERE json_extract(j.value, '$.source') = 'task' OR json_extract(j.value, '$.role') = 'user'"
            " ORDER BY json_extract(j.value, '$.source') = 'task' DESC, j.key LIMIT 1)"
            " FROM episodes e WHERE e.rowid IN (SELECT min(rowid) FROM episodes GROUP BY task)", (chars,))
        return {task: text for task, text in rows if isinstance(text, str)}

    def search(self, text: str, *, limit: int = 100) -> list[tuple[str, str, str, int, int, str]]:
        """The episodes one of whose trajectory entries holds ``text`` (letters A-Z in either case),
        in run order: ``(task, agent, model, seed, entry index, entry text)`` of the first such
        entry, at most ``limit`` of them."""
        rows = self._db.execute(
            "SELECT e.task, e.agent, e.model, e.seed, min(j.key), json_extract(j.value, '$.content')"
            " FROM episodes e, json_each(e.trajectory) j"
            " WHERE instr(lower(json_extract(j.value, '$.content')), lower(?)) > 0"
            " GROUP BY e.task, e.agent, e.model, e.seed ORDER BY min(e.position) LIMIT ?", (text, limit))
        return [(task, agent, model, seed, index, str(content)) for task, agent, model, seed, index, content in rows]

    def iter_trajectories(self) -> Iterator[EpisodeResult]:
        """Episodes one at a time, with trajectories (for exports of large runs)."""
        for row in self._db.execute(f"SELECT row, trajectory, events, {self._environment} FROM episodes ORDER BY position"):
            yield self._result(*row)

    @staticmethod
    def _result(row: str, trajectory: str, events: str, environment: str) -> EpisodeResult:
        side = json.loads(environment)
        return EpisodeResult(**json.loads(row), trajectory=json.loads(trajectory), events=json.loads(events),
                             task_text=side.get("task_text"), env_steps=side.get("steps", []))

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


def _create(path: Path) -> None:
    """A new store at ``path`` with its tables, whole or not at all: made beside it and renamed into
    place, so a writer killed while creating it leaves no empty file that is no store."""
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as made:
        temporary = Path(made.name)
    try:
        db = sqlite3.connect(temporary, isolation_level=None)
        try:
            db.executescript(_SCHEMA)
        finally:
            db.close()
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _has_environment(db: sqlite3.Connection) -> bool:
    """Whether the store's episodes keep the environment's side (stores made since it do)."""
    return any(column[1] == "environment" for column in db.execute("PRAGMA table_info(episodes)"))


def _check_schema(db: sqlite3.Connection, path: Path) -> None:
    """Refuse a database without the store's tables (an empty file, another program's database)."""
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = sorted({"run", "episodes"} - tables)
    if missing:
        raise RunNotFound(f"{path} is not a run store (no {' or '.join(missing)} table); "
                          "remove it, or pass a directory made by 'statebound eval'")


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
