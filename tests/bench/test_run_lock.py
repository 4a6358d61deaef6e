"""One writer per run directory (issue #51): a second ``statebound eval`` on a directory whose run
is being written is refused, naming the process that writes it, before it runs anything (it re-ran
714 of 800 episodes); a killed writer leaves no lock that stops the next run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import stop
from typer.testing import CliRunner

from statebound.bench.run_lock import LOCK_NAME, RunInUse, RunLock
from statebound.bench.store import RunStore
from statebound.cli.app import app

STATEBOUND = Path(sys.executable).parent / "statebound"
SLOW = "function:statebound.benchmarks.toy:slow_oracle"  # 50 ms a reply
runner = CliRunner()


def _writer(out: Path) -> subprocess.Popen[str]:
    """A real eval writing ``out`` for several seconds, once it holds the lock."""
    process = subprocess.Popen([str(STATEBOUND), "eval", "toy", "-a", "verify", "-m", SLOW, "-O", "count=60", "-j", "1",
                                "--out", str(out), "--no-progress", "--no-plots"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (out / LOCK_NAME).is_file() or not (out / LOCK_NAME).read_text():
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)
    return process


def _stored(out: Path) -> int:
    with RunStore(out, read_only=True) as store:
        return len(store.finished())


def test_a_second_eval_on_a_run_being_written_is_refused_naming_the_writer(tmp_path: Path) -> None:
    out = tmp_path / "run"
    writer = _writer(out)
    try:
        second = runner.invoke(app, ["eval", "--out", str(out), "--resume", "-m", SLOW, "--no-progress", "--no-plots"])
        assert second.exit_code == 2, second.output
        line = " ".join(second.output.split())
        assert f"{out} is in use by process {writer.pid} on " in line and "statebound eval toy" in line
        assert "one run writes a directory at a time" in line
    finally:
        writer.send_signal(signal.SIGINT)  # stops keeping what finished (exit 130)
        assert writer.wait(timeout=60) == 130
    assert not (out / LOCK_NAME).exists()  # a writer that ends removes it
    before = _stored(out)
    resumed = runner.invoke(app, ["eval", "--out", str(out), "--resume", "--no-progress", "--no-plots"])
    assert resumed.exit_code == 0, resumed.output
    assert f"{60 - before} episodes run, {before} already stored" in resumed.output


def test_a_killed_writer_leaves_no_lock_that_stops_the_next_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    writer = _writer(out)
    holder = json.loads((out / LOCK_NAME).read_text())
    assert holder["pid"] == writer.pid
    while not (out / "run.sqlite").exists() or _stored(out) < 2:  # killed while writing episodes
        assert writer.poll() is None
        time.sleep(0.05)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=30)
    stop(writer, timeout=5)
    assert (out / LOCK_NAME).exists()  # left behind, but nobody holds it
    resumed = runner.invoke(app, ["eval", "--out", str(out), "--resume", "--no-progress", "--no-plots"])
    assert resumed.exit_code == 0, resumed.output
    assert _stored(out) == 60 and not (out / LOCK_NAME).exists()


def test_the_lock_is_refused_in_one_process_too_and_a_refused_run_leaves_no_directory(tmp_path: Path) -> None:
    with RunLock(tmp_path / "made"):
        with pytest.raises(RunInUse, match=f"in use by process {os.getpid()}"):
            RunLock(tmp_path / "made").__enter__()
    assert not (tmp_path / "made").exists()  # made for the run, left empty: removed
