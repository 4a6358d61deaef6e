"""Runs in read-only places (issue #51), on a real read-only file system (a bubblewrap read-only
bind mount): every reader opens the store, even with a killed writer's log beside it and no way to
fold it in; ``report`` into a read-only run says so, and ``report --out ELSEWHERE`` writes only
there (it rewrote the run's trajectories, and crashed on a read-only run); ``eval`` names the
read-only directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from statebound.bench.store import RunStore
from statebound.cli.app import app

STATEBOUND = Path(sys.executable).parent / "statebound"
ORACLE = "function:statebound.benchmarks.toy:oracle"
runner = CliRunner()


def _read_only_mounts() -> str | None:
    if shutil.which("bwrap") is None:
        return "needs bubblewrap (apt-get install bubblewrap)"
    probe = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--ro-bind", "/tmp", "/tmp", "true"], capture_output=True,
                           text=True, check=False)
    return None if probe.returncode == 0 else f"bubblewrap cannot mount here: {probe.stderr.strip()}"


needs_mounts = pytest.mark.skipif((why := _read_only_mounts()) is not None, reason=str(why))


def _read_only(place: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``statebound ARGS`` with ``place`` mounted read-only."""
    return subprocess.run(["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(place), str(place), str(STATEBOUND), *args],
                          capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "COLUMNS": "200"})


@pytest.fixture
def run(tmp_path: Path) -> Path:
    out = tmp_path / "place" / "run"
    made = runner.invoke(app, ["eval", "toy", "-a", "direct", "-m", ORACLE, "--limit", "2", "--out", str(out),
                               "--no-progress", "--no-plots"])
    assert made.exit_code == 0, made.output
    return out


def _files(directory: Path) -> dict[str, int]:
    return {str(path.relative_to(directory)): path.stat().st_mtime_ns for path in directory.rglob("*") if path.is_file()}


def test_report_elsewhere_writes_only_there(run: Path, tmp_path: Path) -> None:
    before = _files(run)
    made = runner.invoke(app, ["report", str(run), "--no-plots", "--out", str(tmp_path / "elsewhere")])
    assert made.exit_code == 0, made.output
    assert _files(run) == before  # not one file of the run rewritten
    assert {"report.md", "report.html"} <= set(_files(tmp_path / "elsewhere"))


@needs_mounts
def test_report_on_a_read_only_run_names_it_and_writes_elsewhere(run: Path, tmp_path: Path) -> None:
    inside = _read_only(run.parent, "report", str(run), "--no-plots")
    assert inside.returncode == 2 and inside.stderr.strip() == (
        f"error: {run} is read-only: give --out a directory this user may write"), inside.stderr
    elsewhere = _read_only(run.parent, "report", str(run), "--no-plots", "--out", str(tmp_path / "out"))
    assert elsewhere.returncode == 0, elsewhere.stderr
    grown = _read_only(run.parent, "eval", "--out", str(run), "--resume", "--seed", "1", "--no-progress")
    assert grown.returncode == 2 and f"cannot run into {run}: it is read-only" in grown.stderr


@needs_mounts
def test_readers_read_a_killed_writers_log_in_a_read_only_place(run: Path) -> None:
    killed = (f"import os\nfrom statebound.bench.store import RunStore\nfrom statebound.contract.result import EpisodeResult\n"
              f"store = RunStore({str(run)!r})\n"
              "store.save(EpisodeResult(task='toy-002', agent='direct', model={!r}, success=True, reward=1.0, turns=1), "
              "benchmark='toy', position=9)\nos._exit(0)\n").format(ORACLE)
    subprocess.run([sys.executable, "-c", killed], check=True, timeout=60)
    (run / "run.sqlite-shm").unlink()  # as a copied or committed store may come: the log alone
    assert (run / "run.sqlite-wal").stat().st_size > 0
    status = _read_only(run.parent, "status", str(run))
    assert status.returncode == 0, status.stderr
    assert "3/2" in status.stdout  # the episode only the log holds is counted
    shown = _read_only(run.parent, "show", str(run), "--task", "toy-002")
    assert shown.returncode == 0 and "toy-002" in shown.stdout, shown.stderr
    assert sorted(path.name for path in run.iterdir() if path.name.startswith("run.sqlite")) == [
        "run.sqlite", "run.sqlite-wal"]  # nothing written there
    with RunStore(run, read_only=True) as store:  # writable again: folded in as before
        assert len(store.finished()) == 3
