"""Bounds on the Bash sandbox as a whole (issue #38): /dev inside the disk limit, memory and
processes in total (a cgroup where the machine allows one), leftovers of killed runs removed."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from bash_doubles import needs_sandbox, sandboxed_episode

from statebound.envs.bash import BashEnv, SandboxLimits
from statebound.envs.bash.cgroup import create_cgroup
from statebound.envs.bash.leftovers import remove_leftovers
from statebound.envs.bash.sandbox import per_process_limits

pytestmark = [pytest.mark.integration, needs_sandbox]

LIMITS = SandboxLimits(
    timeout_s=3.0, max_disk_bytes=32 << 20, max_total_memory_bytes=256 << 20, max_processes=32
)


@pytest.fixture
def env():
    with sandboxed_episode(LIMITS) as environment:
        yield environment


def _needs(condition: bool, what: str) -> None:
    if not condition:
        pytest.skip(f"{what} needs root (a tmpfs and a writable cgroup)")


def _needs_totals(env: BashEnv, what: str) -> None:
    """Skip where no cgroup can be made; fail where one can but the sandbox has none."""
    probe = create_cgroup(f"statebound-probe-{os.getpid()}", memory_bytes=1 << 30, processes=8)
    if probe is not None:
        probe.remove()
    _needs(probe is not None, what)
    assert env._sandbox.totals_limited, "this machine allows a cgroup, but the sandbox has none"


@pytest.mark.parametrize("directory", ["/dev", "/tmp"])
def test_writing_2_gb_into_dev_or_tmp_stops_at_the_disk_limit(env, directory):
    _needs(env._sandbox.disk_limited, "the disk limit")
    # 2 GB in 16 MB files (each file is capped too), as in the issue
    fill = f"for i in $(seq 128); do head -c 16M /dev/zero > {directory}/f$i || break; done"
    step = env.step(f"execute[{fill}]")
    assert not step.info["timed_out"]
    assert "No space left on device" in env.last_output
    assert "disk limit reached" in env.last_output and "/dev" in env.last_output
    written = sum(f.stat().st_size for f in (env._sandbox.root / directory[1:]).glob("f*"))
    assert written <= LIMITS.max_disk_bytes
    cleanup = f"execute[rm {directory}/f[0-9]*; echo hi > /dev/null && echo ok]"
    assert env.step(cleanup).observation == "ok\n"


def test_memory_is_bounded_for_all_processes_together(env):
    _needs_totals(env, "a memory total")
    hog = "python3 -c 'b = bytearray(150 << 20); import time; time.sleep(1)'"
    step = env.step(f"execute[for i in 1 2 3; do {hog} & done; wait; echo finished]")
    assert "Killed" in env.last_output
    assert "memory limit reached" in env.last_output and "256 MiB" in env.last_output
    assert env.step("execute[echo still here]").observation == "still here\n"
    assert step.info["exit_code"] == 0  # the episode goes on


def test_one_process_is_bounded_by_its_address_space():
    environment = BashEnv(limits=SandboxLimits(max_memory_bytes=128 << 20))
    try:
        environment.reset("1-0")
        step = environment.step("execute[python3 -c 'bytearray(256 << 20)']")
        assert "MemoryError" in step.observation and step.info["exit_code"] != 0
    finally:
        environment.close()


def test_fork_bomb_hits_the_process_limit_and_says_so(env):
    _needs_totals(env, "a process total")
    step = env.step("execute[:(){ :|:& };:]")
    assert step.info["timed_out"]
    assert "process limit reached: at most 32 processes" in env.last_output
    assert env.step("execute[echo still here]").observation == "still here\n"


def test_without_a_cgroup_processes_times_memory_stays_within_the_total():
    for limits in (SandboxLimits(), LIMITS, SandboxLimits(max_total_memory_bytes=4 << 30)):
        processes, per_process = per_process_limits(limits)
        assert processes * per_process <= limits.max_total_memory_bytes
        assert processes <= limits.max_processes and per_process <= limits.max_memory_bytes


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_leftovers_of_a_dead_run_are_removed_and_live_ones_kept(tmp_path):
    dead = tmp_path / f"statebound-bash-{_dead_pid()}-abc"
    live = tmp_path / f"statebound-bash-{os.getpid()}-def"
    for base in (dead, live):
        (base / "root" / "testbed").mkdir(parents=True)
    mounted = (
        os.geteuid() == 0
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(dead / "root")], check=False
        ).returncode
        == 0
    )
    (dead / "root" / "file").write_text("left behind")
    assert remove_leftovers(tmp_path) == [dead]
    assert not dead.exists() and live.exists()
    if mounted:
        assert str(dead) not in Path("/proc/self/mounts").read_text()


def test_a_new_sandbox_removes_leftovers_in_the_temp_dir():
    leftover = Path(tempfile.gettempdir()) / f"statebound-bash-{_dead_pid()}-xyz"
    leftover.mkdir()
    from statebound.envs.bash import sandbox

    sandbox._remove_leftovers_once.cache_clear()
    environment = BashEnv(limits=LIMITS)
    try:
        environment.reset("1-0")
        assert not leftover.exists()
    finally:
        environment.close()


def test_statebound_clean_removes_a_dead_runs_sandbox(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from statebound.cli.app import app

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = tmp_path / f"statebound-bash-{_dead_pid()}-abc"
    (dead / "root").mkdir(parents=True)
    result = CliRunner().invoke(app, ["clean"])
    assert result.exit_code == 0, result.output
    assert f"removed {dead}" in result.output and not dead.exists()
