"""Reading a run store (reports, status) leaves no -wal/-shm files behind: a finished store's bytes
do not change, a killed writer's log is folded in, a running writer's episodes are read and its log
left to it."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path

from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.store import RunStore
from statebound.contract.result import EpisodeResult
from statebound.report.finish import finish_run
from statebound.report.status import run_progress

CONFIG = RunConfig(benchmark="toy", agents=("a",), models=(ModelSpec("m"),), task_ids=("t1", "t2"))


def _save(store: RunStore, task: str, position: int) -> None:
    store.save(EpisodeResult(task=task, agent="a", model="m", success=True, turns=1), benchmark="toy",
               position=position)


def _stored_in_wal_mode(run_dir: Path) -> Path:
    """A finished store left in WAL mode, as a run killed after its last commit (or committed so) is."""
    with RunStore(run_dir) as store:
        store.start(CONFIG, resume=False)
        _save(store, "t1", 0)
    db = sqlite3.connect(run_dir / "run.sqlite")
    assert db.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    db.close()
    return run_dir / "run.sqlite"


def _logs(run_dir: Path) -> list[str]:
    return sorted(path.name for path in run_dir.glob("run.sqlite-*"))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_reading_a_store_in_wal_mode_leaves_no_log_files_and_no_change(tmp_path: Path) -> None:
    store = _stored_in_wal_mode(tmp_path / "run")
    before = _digest(store)
    assert _logs(store.parent) == []
    with RunStore(store.parent, read_only=True) as reader:
        assert [r.task for r in reader.results()] == ["t1"]
    run_progress(store.parent)
    finish_run([store.parent], out_dir=tmp_path / "report", plots=False)
    assert _logs(store.parent) == []
    assert _digest(store) == before


def test_empty_log_files_left_by_an_older_reader_are_removed(tmp_path: Path) -> None:
    store = _stored_in_wal_mode(tmp_path / "run")
    before = _digest(store)
    old_reader = sqlite3.connect(f"file:{store}?mode=ro", uri=True)  # what reports used to do
    old_reader.execute("SELECT count(*) FROM episodes").fetchone()
    old_reader.close()
    assert _logs(store.parent) == ["run.sqlite-shm", "run.sqlite-wal"]
    run_progress(store.parent)
    assert _logs(store.parent) == []
    assert _digest(store) == before


def test_a_running_writers_log_is_read_and_left_to_it(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with RunStore(run_dir) as writer:
        writer.start(CONFIG, resume=False)
        _save(writer, "t1", 0)
        _save(writer, "t2", 1)
        before = _digest(run_dir / "run.sqlite")
        with RunStore(run_dir, read_only=True) as reader:
            assert [r.task for r in reader.results()] == ["t1", "t2"]  # the episodes still in the log
        assert (run_progress(run_dir)[0].stored, _digest(run_dir / "run.sqlite")) == (2, before)
        assert "run.sqlite-wal" in _logs(run_dir)  # the writer's, still open
        _save(writer, "t2", 1)  # and it goes on writing
    assert _logs(run_dir) == []  # the writer folded it in as it closed
    with RunStore(run_dir, read_only=True) as reader:
        assert len(reader.results()) == 2


def test_a_killed_writers_log_is_folded_in_by_the_next_reader(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    with RunStore(run_dir) as store:
        store.start(CONFIG, resume=False)
    killed = (
        "import os, sys\n"
        "from statebound.contract.result import EpisodeResult\n"
        "from statebound.bench.store import RunStore\n"
        "store = RunStore(sys.argv[1])\n"
        "for position, task in enumerate(('t1', 't2')):\n"
        "    store.save(EpisodeResult(task=task, agent='a', model='m'), benchmark='toy', position=position)\n"
        "os._exit(9)  # as kill -9: the store is never closed\n"
    )
    subprocess.run([sys.executable, "-c", killed, str(run_dir)], check=False)
    assert "run.sqlite-wal" in _logs(run_dir)
    assert [p.stored for p in run_progress(run_dir)] == [2]
    assert _logs(run_dir) == []
    db = sqlite3.connect(run_dir / "run.sqlite")
    assert db.execute("SELECT count(*) FROM episodes").fetchone() == (2,)  # in the file itself now
    db.close()
