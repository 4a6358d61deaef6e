"""Packed run stores (``run.sqlite.xz``, how the committed records keep them): ``statebound pack``
writes one from a store (even one being written), every reader opens it without the plain file,
and a resumed run unpacks it in place and keeps what was stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from statebound.bench.models import ModelSpec
from statebound.bench.packed import PACKED_NAME, STORE_NAME, pack
from statebound.bench.plan import RunConfig
from statebound.bench.store import RunStore
from statebound.cli.app import app
from statebound.contract.result import EpisodeResult
from statebound.report.status import find_runs, run_progress
from statebound.view.sources import find_sources

CONFIG = RunConfig(benchmark="toy", agents=("a",), models=(ModelSpec("m"),), task_ids=("t1", "t2", "t3"))


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _save(store: RunStore, task: str, position: int) -> None:
    store.save(EpisodeResult(task=task, agent="a", model="m", success=task != "t2", turns=1), benchmark="toy",
               position=position)


def _packed_run(root: Path) -> Path:
    """A run of two episodes, packed, its plain store removed (as a clean clone of the records has it)."""
    run = root / "records" / "toy" / "a"
    with RunStore(run) as store:
        store.start(CONFIG, resume=False)
        _save(store, "t1", 0)
        _save(store, "t2", 1)
    plain, packed = pack(run)
    assert packed < plain
    (run / STORE_NAME).unlink()
    return run


def test_every_reader_opens_a_packed_store(tmp_path: Path, private_cache: Path) -> None:
    run = _packed_run(tmp_path)
    with RunStore(run, read_only=True) as store:
        assert [(r.task, r.success) for r in store.results()] == [("t1", True), ("t2", False)]
    assert find_runs([tmp_path / "records"]) == [run]
    assert [(p.agent, p.stored) for p in run_progress(run)] == [("a", 2)]
    assert list(find_sources([tmp_path / "records"]).runs) == ["toy-a"]
    shown = CliRunner().invoke(app, ["show", str(run), "--task", "t2"])
    assert shown.exit_code == 0, shown.output
    assert "t2" in shown.output and "failure" in shown.output
    assert not (run / STORE_NAME).exists()  # read through a copy in the cache
    assert len(list((private_cache / "statebound" / "stores").glob("*.sqlite"))) == 1


def test_a_resumed_run_unpacks_the_store_in_place_and_keeps_its_episodes(tmp_path: Path) -> None:
    run = _packed_run(tmp_path)
    packed_bytes = (run / PACKED_NAME).read_bytes()
    with RunStore(run) as store:
        store.start(CONFIG, resume=True)
        _save(store, "t3", 2)
    assert (run / PACKED_NAME).read_bytes() == packed_bytes  # left as it was until packed again
    with RunStore(run, read_only=True) as store:  # the plain store, now newer, wins
        assert [r.task for r in store.results()] == ["t1", "t2", "t3"]


def test_a_store_being_written_packs_what_was_committed(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with RunStore(run) as writer:
        writer.start(CONFIG, resume=False)
        _save(writer, "t1", 0)
        pack(run)  # the writer keeps its connection (WAL mode) open
        _save(writer, "t2", 1)
    (run / STORE_NAME).unlink()
    with RunStore(run, read_only=True) as store:
        assert [r.task for r in store.results()] == ["t1"]


def test_pack_command_reports_sizes_and_refuses_a_folder_without_runs(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "a"
    with RunStore(run) as store:
        store.start(CONFIG, resume=False)
        _save(store, "t1", 0)
    packed = CliRunner().invoke(app, ["pack", str(tmp_path / "runs")])
    assert packed.exit_code == 0, packed.output
    assert f"{run}: " in packed.output and " -> " in packed.output
    assert (run / PACKED_NAME).is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = CliRunner().invoke(app, ["pack", str(empty)])
    assert refused.exit_code == 2 and "holds no run" in refused.output
