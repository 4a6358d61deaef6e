"""Ctrl-C (SIGINT) or SIGTERM stops 'statebound eval' at once: what finished is stored, episodes in
flight are not (no crashed rows), a Ray cluster the run started is shut down, and --resume runs
the rest."""

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

HERE = Path(__file__).parent
CLI = [sys.executable, "-c", "from statebound.cli import main; main()"]
COUNT = 60  # toy tasks; one agent, one seed: 60 episodes of 0.3 s, 4 at a time (about 5 s in all)
MESSAGE = "interrupted: {} of {} episodes stored; statebound eval --out {} --resume continues it"


def _args(out, model="dozy", *extra):
    return ["eval", "toy", "-a", "direct", "-m", f"function:harness_doubles:{model}", "-O", f"count={COUNT}",
            "-j", "4", "--no-progress", "--no-plots", "--out", str(out), *extra]


def _env(**extra):
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    return {**env, "PYTHONPATH": str(HERE), **extra}  # the episodes import harness_doubles


def _stored(out):
    """(episodes stored, of which crashed)."""
    path = out / "run.sqlite"
    if not path.exists():
        return 0, 0
    with sqlite3.connect(path, timeout=5) as db:
        try:
            return db.execute("SELECT count(*), coalesce(sum(error IS NOT NULL), 0) FROM episodes").fetchone()
        except sqlite3.OperationalError:  # the table is not there yet
            return 0, 0


def _start(out, *extra, model="dozy", ignore_sigint=False, env=None):
    # a script's background job ('cmd &') starts with SIGINT ignored: records are run that way
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    return subprocess.Popen([*CLI, *_args(out, model, *extra)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env or _env(), preexec_fn=ignore)


def _wait_stored(process, out, at_least, timeout):
    deadline = time.monotonic() + timeout
    while _stored(out)[0] < at_least:
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            output, errors = process.communicate()
            pytest.fail(f"{at_least} episodes were not stored in {timeout}s (exit {process.returncode}): {errors}")
        time.sleep(0.05)


def _stop(process, signum, within):
    """Send ``signum``; the process must end within ``within`` seconds: (status, stdout, stderr, seconds)."""
    process.send_signal(signum)
    sent = time.monotonic()
    try:
        output, errors = process.communicate(timeout=within)
    except subprocess.TimeoutExpired:
        process.kill()
        output, errors = process.communicate()
        pytest.fail(f"still running {within}s after {signal.Signals(signum).name}: {errors}")
    return process.returncode, output, errors, time.monotonic() - sent


def _check_interrupted(out, status, errors, *, code=130):
    stored, crashed = _stored(out)
    assert status == code, errors
    assert MESSAGE.format(stored, COUNT, out) in errors.splitlines(), errors
    assert "Traceback" not in errors
    assert crashed == 0  # episodes cut off are not results
    assert 0 < stored < COUNT
    return stored


def _check_resumed(out, stored):
    """--resume (run here: the executor is not part of the configuration) runs only the rest."""
    resumed = subprocess.run([*CLI, *_args(out), "--resume"], capture_output=True, text=True, env=_env(),
                             timeout=120, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{COUNT - stored} episodes run, {stored} already stored, 0 crashed" in resumed.stdout
    assert _stored(out) == (COUNT, 0)


@pytest.mark.parametrize(("signum", "code", "ignored"), [
    (signal.SIGINT, 130, False),  # Ctrl-C in a terminal
    (signal.SIGINT, 130, True),  # kill -INT to a run started in the background (SIGINT ignored)
    (signal.SIGTERM, 143, False),  # kill
])
def test_a_signal_stops_a_local_run_keeping_what_finished(tmp_path, signum, code, ignored):
    out = tmp_path / "run"
    process = _start(out, ignore_sigint=ignored)
    _wait_stored(process, out, 8, timeout=60)
    status, _, errors, seconds = _stop(process, signum, within=15)
    assert seconds < 5, errors
    stored = _check_interrupted(out, status, errors, code=code)
    _check_resumed(out, stored)


def test_a_second_signal_exits_at_once(tmp_path):
    """Episodes whose cancellation takes a minute hold up the orderly stop; a second Ctrl-C ends it."""
    out = tmp_path / "run"
    process = _start(out, model="slow_to_stop")
    _wait_stored(process, out, 4, timeout=60)
    time.sleep(0.5)  # the next four episodes are in their model calls (60 s each)
    process.send_signal(signal.SIGINT)
    time.sleep(1)
    assert process.poll() is None  # still stopping
    status, _, errors, seconds = _stop(process, signal.SIGINT, within=10)
    assert seconds < 3 and status == 130, errors
    assert "interrupted again: exiting at once" in errors
    assert _stored(out)[1] == 0


def test_threads_of_abandoned_episodes_do_not_hold_up_the_exit(tmp_path):
    """An in-process model computes in a worker thread, which cancelling its episode cannot stop;
    Python's exit would wait for it (30 s here)."""
    out = tmp_path / "run"
    process = _start(out, model="stuck_in_thread")
    _wait_stored(process, out, 8, timeout=60)
    status, _, errors, seconds = _stop(process, signal.SIGINT, within=40)
    assert seconds < 5, errors
    assert _check_interrupted(out, status, errors) == 8


@pytest.mark.integration
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_a_ray_run_and_the_cluster_it_started(tmp_path, signum, code):
    """The run starts its own Ray cluster (in a private temp dir: no other cluster is touched).
    ray.init sets a SIGTERM handler of its own (exit at once): the run's is kept."""
    pytest.importorskip("ray")
    psutil = pytest.importorskip("psutil")
    out = tmp_path / "run"
    with tempfile.TemporaryDirectory(prefix="sbray-", dir="/tmp") as ray_tmp:  # short: socket paths
        process = _start(out, "--executor", "ray", env=_env(RAY_TMPDIR=ray_tmp))
        _wait_stored(process, out, 8, timeout=180)
        status, _, errors, seconds = _stop(process, signum, within=60)
        assert seconds < 20, errors
        stored = _check_interrupted(out, status, errors, code=code)
        deadline = time.monotonic() + 10
        while _processes_using(psutil, ray_tmp) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _processes_using(psutil, ray_tmp), "the run left its Ray cluster running"
    _check_resumed(out, stored)


def _processes_using(psutil, path):
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if any(path in part for part in process.info["cmdline"] or ()):
            found.append(process)
    return found
