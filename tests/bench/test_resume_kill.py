"""A run killed with SIGKILL mid-way and resumed equals an uninterrupted run."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

CLI = [sys.executable, "-c", "from statebound.cli import main; main()"]
ARGS = ["eval", "toy", "-a", "direct", "-a", "verify", "-m", "function:statebound.benchmarks.toy:slow_oracle",
        "--seed", "0", "--seed", "1", "-O", "count=30", "-j", "4", "--no-progress", "--no-plots"]
TOTAL = 2 * 2 * 30


def _eval(out, *extra):
    return subprocess.run([*CLI, *ARGS, "--out", str(out), *extra], capture_output=True, text=True, timeout=120, check=False)


def _stored(out):
    path = out / "run.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(path, timeout=5) as db:
        try:
            return db.execute("SELECT count(*) FROM episodes").fetchone()[0]
        except sqlite3.OperationalError:  # table not created yet
            return 0


def _rows(out):
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for row in rows:
        row.pop("wall_seconds")
    return rows


def test_kill_9_then_resume_equals_uninterrupted_run(tmp_path):
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    process = subprocess.Popen([*CLI, *ARGS, "--out", str(killed)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while _stored(killed) < 20 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL, process.stderr.read().decode()
    at_kill = _stored(killed)
    assert 20 <= at_kill < TOTAL

    resumed = _eval(killed, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"{TOTAL - at_kill} episodes run, {at_kill} already stored" in resumed.stdout

    uninterrupted = _eval(clean)
    assert uninterrupted.returncode == 0, uninterrupted.stderr

    rows = _rows(killed)
    keys = [(r["task"], r["agent"], r["model"], r["seed"]) for r in rows]
    assert len(keys) == TOTAL == len(set(keys))
    assert rows == _rows(clean)
    assert (killed / "report.md").read_text() == (clean / "report.md").read_text()


def test_resume_with_other_options_is_refused_with_reason(tmp_path):
    out = tmp_path / "run"
    assert _eval(out, "--limit", "2").returncode == 0
    refused = _eval(out, "--limit", "3", "--resume")
    assert refused.returncode == 2
    assert "configuration differs (task_ids: stored" in refused.stderr
