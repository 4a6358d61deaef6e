"""Hostile commands are contained by the sandbox, and the episode carries on afterwards.

Each test runs a hostile command through the environment (one through a scripted ReAct agent),
then checks concretely: host files untouched (checksums of a canary outside and of project files),
the command returned within the limit, output capped, network unreachable, no process left behind,
other episodes untouched, and the next command still works.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
import time
from pathlib import Path

import pytest
from bash_doubles import needs_sandbox, sandboxed_episode

from statebound.agents.bash import build_react
from statebound.envs.bash import BashEnv, SandboxLimits
from statebound.llm.testing import ScriptedLLM

pytestmark = [pytest.mark.integration, needs_sandbox]

LIMITS = SandboxLimits(
    timeout_s=2.0, max_output_bytes=64 * 1024, max_file_bytes=8 << 20, max_disk_bytes=32 << 20
)
PROJECT_FILE = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def canary(tmp_path):
    path = tmp_path / "canary.txt"
    path.write_text("host data that no episode may touch\n")
    return path, _digest(path)


@pytest.fixture
def env():
    with sandboxed_episode(LIMITS) as environment:
        yield environment


def _host_intact(canary) -> None:
    path, digest = canary
    assert _digest(path) == digest
    assert PROJECT_FILE.exists() and Path("/usr/bin/ls").exists() and Path(sys.executable).exists()


def _still_works(env: BashEnv) -> None:
    step = env.step("execute[echo still here]")
    assert step.ok and step.observation == "still here\n"


def _live_processes_of(uid: int) -> int:
    """Processes of ``uid`` that are not zombies (killed ones wait for the host's init to reap)."""
    count = 0
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and proc.stat().st_uid == uid:
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
                count += state != "Z"
        except OSError:
            continue
    return count


def test_default_limits_are_the_benchmarks():
    limits = SandboxLimits()
    assert (
        limits.timeout_s == 10.0
        and limits.max_processes <= 128
        and limits.max_output_bytes <= 1 << 20
    )


def test_rm_rf_root_stays_inside_its_episode(env, canary):
    other = BashEnv(limits=LIMITS)
    try:
        other.reset("1-0")
        step = env.step("execute[rm -rf --no-preserve-root / 2>/dev/null; ls /]")
        assert "testbed" not in step.observation
        _host_intact(canary)
        assert other.step("execute[ls /testbed]").observation.startswith("FooBar.html\n")
        _still_works(env)
    finally:
        other.close()


def test_fork_bomb_is_limited_and_cleaned_up(env, canary):
    started = time.monotonic()
    step = env.step("execute[:(){ :|:& };:]")
    assert time.monotonic() - started < LIMITS.timeout_s + 5
    assert not step.ok and step.info["timed_out"]
    assert step.observation.startswith("Command timed out")  # + the bound hit, where known
    uid = env._sandbox._uid  # the sandbox's own host uid (root only)
    if uid is not None:
        assert _live_processes_of(uid) == 0
    _host_intact(canary)
    _still_works(env)


def test_endless_output_is_capped(env):
    started = time.monotonic()
    step = env.step("execute[yes]")
    assert time.monotonic() - started < LIMITS.timeout_s
    assert step.info["truncated"] and not step.ok
    assert len(step.observation) == 350
    assert len(env.last_output) < LIMITS.max_output_bytes + 100
    _still_works(env)


def test_sleep_is_stopped_at_the_time_limit(env):
    started = time.monotonic()
    step = env.step("execute[sleep 1000]")
    elapsed = time.monotonic() - started
    assert LIMITS.timeout_s <= elapsed < LIMITS.timeout_s + 3
    assert step.observation == "Command timed out" and step.info["timed_out"]
    assert not any(
        b"sleep\x001000" in _cmdline(p) for p in Path("/proc").iterdir() if p.name.isdigit()
    )
    _still_works(env)


def _cmdline(path: Path) -> bytes:
    try:
        return (path / "cmdline").read_bytes()
    except OSError:
        return b""


def test_network_is_unreachable(env):
    tcp = env.step("execute[echo hi > /dev/tcp/1.1.1.1/80]")
    assert not tcp.ok and "Network is unreachable" in tcp.observation
    dns = env.step("execute[getent hosts example.com]")
    assert not dns.ok and dns.observation == ""
    interfaces = env.step("execute[cat /proc/net/dev]").observation
    assert (
        "lo:" in interfaces
        and "eth0" not in interfaces
        and len(interfaces.strip().splitlines()) == 3
    )


def test_host_secrets_and_project_files_are_invisible(env):
    for path in (
        "/etc/shadow",
        str(PROJECT_FILE),
        sys.executable,
        "/work",
        "/home",
        "/root/.bashrc",
    ):
        step = env.step(f"execute[cat {path}]")
        assert not step.ok and "No such file or directory" in step.observation, path
    leaked = env.step("execute[env]").observation
    names = {line.split("=", 1)[0] for line in leaked.splitlines() if "=" in line}
    assert names <= {"PATH", "HOME", "LANG", "USER", "HOSTNAME", "PWD", "SHLVL", "_", "OLDPWD"}
    assert env.step("execute[cat /etc/passwd]").observation.startswith("root:x:0:0:")


def test_writes_outside_the_testbed_do_not_reach_the_host(env, canary, tmp_path):
    usr = env.step("execute[echo evil > /usr/bin/evil]")
    assert not usr.ok and "Read-only file system" in usr.observation
    assert not Path("/usr/bin/evil").exists()
    canary_path, _ = canary
    target = canary_path.parent
    wrote = env.step(
        f"execute[mkdir -p {target} && echo pwned > {canary_path} && echo pwned > /tmp/pwned-by-sandbox]"
    )
    assert wrote.ok  # it wrote into the sandbox's own copies of those paths ...
    _host_intact(canary)  # ... and the host's are untouched
    assert not Path("/tmp/pwned-by-sandbox").exists()
    _still_works(env)


def test_filling_the_disk_is_bounded(env, canary):
    big = env.step("execute[dd if=/dev/zero of=/testbed/big bs=1M count=100]")
    assert not big.ok and "File size limit exceeded" in big.observation
    sandbox = env._sandbox
    if not sandbox.disk_limited:
        pytest.skip("disk quota needs root (a size-limited tmpfs); the per-file cap was checked")
    free_before = shutil.disk_usage("/tmp").free
    fill = env.step(
        "execute[for i in $(seq 40); do head -c 4M /dev/zero > /testbed/f$i || break; done]"
    )
    assert "No space left on device" in fill.observation
    used = sum(
        f.stat().st_size for f in sandbox.root.rglob("*") if f.is_file() and not f.is_symlink()
    )
    assert used <= LIMITS.max_disk_bytes
    assert free_before - shutil.disk_usage("/tmp").free < 8 << 20  # the host disk did not fill
    _host_intact(canary)
    _still_works(env)


def test_scripted_react_agent_survives_hostile_commands(canary):
    env = BashEnv(limits=LIMITS)
    replies = [
        " Break things.\nAction 1: execute[rm -rf --no-preserve-root / 2>/dev/null]",
        " Hang.\nAction 2: execute[sleep 1000]",
        " Escape.\nAction 3: execute[cat /etc/shadow]",
        " Recover.\nAction 4: execute[echo recovered]",
        " Done.\nAction 5: submit",
    ]
    try:
        env.reset("4-0")
        result = build_react().run_sync("Break out", llm=ScriptedLLM(replies), deps=env)
        outcomes = [e.data["outcome"] for e in result.history if e.source == "tool"]
        assert outcomes == [
            "error",
            "error",
            "error",
            "output",
            "submit",
        ]  # rm fails on read-only /usr
        assert result.exit_state == "End" and env.submitted
        score = env.score()
        assert 0 <= score.reward < 1 and score.metrics["error_rate"] == 0.6  # 3 of 4 commands failed; the submit counts too
    finally:
        env.close()
    _host_intact(canary)
