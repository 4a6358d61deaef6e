"""Run model-written shell commands in a bubblewrap sandbox.

Each :class:`Sandbox` owns a fresh directory holding one task's file system; every command runs in a
new ``bwrap`` that presents that directory at ``/`` with the host's ``/usr`` read-only, a fresh
``/proc`` and a ``/dev`` holding only device nodes (a directory of the episode's own, so that files
written there count against its disk), no network, new namespaces of every kind, a new session, and
resource limits (processes, address space, file size, time, output bytes). Nothing else of the host
is visible. The working directory survives between commands: an ``EXIT`` trap reports ``pwd`` on a
private pipe, and the next command starts there.

Run as root (the usual case in containers and CI), the sandbox also runs under its own unprivileged
host uid, which makes the process limit its own rather than shared, and its directory is a
size-limited tmpfs, which caps disk use (``/tmp`` and ``/dev`` included), and where the machine
allows it a cgroup bounds the memory and processes of the sandbox as a whole
(:mod:`statebound.envs.bash.cgroup`; :attr:`Sandbox.totals_limited`). Run as an ordinary user it shares that user's process
count and has no disk quota (each file is still capped); :attr:`Sandbox.disk_limited` says which.
"""

from __future__ import annotations

import os
import random
import selectors
import shutil
import signal
import subprocess
import time
import weakref
from dataclasses import dataclass
from functools import cache
from typing import Self

from statebound.envs.bash.cgroup import SandboxCgroup, create_cgroup
from statebound.envs.bash.leftovers import new_sandbox_dir, release, remove_leftovers
from statebound.envs.bash.testbed import HOSTNAME, build_root, restore_usr_links
from statebound.errors import EnvironmentUnavailable

__all__ = ["CommandResult", "Sandbox", "SandboxLimits", "check_sandbox", "per_process_limits"]

_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_ENV = {"PATH": _PATH, "HOME": "/root", "LANG": "C.UTF-8", "USER": "root", "HOSTNAME": HOSTNAME}
_INSTALL_HINT = (
    "install it with `apt-get install bubblewrap` (the project's set-up script does this)"
)
# Outer wrapper: enter the remembered directory, move the cwd pipe to fd 3, run the command as
# `/bin/bash -c` would (so error messages read "/bin/bash: line 1: ..." as upstream), through the
# read-only /usr so that a command deleting /bin cannot break the next one.
# Then wait for background jobs, as `docker exec` waits for every holder of its output stream
# (the time limit still applies), since the sandbox ends with its first process.
_WRAPPER = (
    'cd -- "$1" 2>/dev/null || cd /; exec 3>&{fd} {fd}>&-; (exec -a /bin/bash /usr/bin/bash -c "$2"); '
    "status=$?; exec 3>&-; "
    "while :; do n=0; for p in /proc/[0-9]*; do n=$((n+1)); done; [ $n -le 2 ] && break; "
    "sleep 0.02; done; exit $status"
)
_PRIVATE_UIDS = (200_000, 260_000)
# /dev holds the device nodes programs need, bound into the episode's own directory (so that
# anything else written there counts against its disk limit), not a RAM file system of its own.
_DEVICES = [
    arg
    for node in ("null", "zero", "full", "random", "urandom", "tty")
    for arg in ("--dev-bind", f"/dev/{node}", f"/dev/{node}")
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxLimits:
    """Resource limits for each command (and, as root, the episode's disk)."""

    timeout_s: float = 10.0
    max_output_bytes: int = 256 * 1024
    max_processes: int = 64
    max_memory_bytes: int = 1 << 30  # per process (address space)
    max_total_memory_bytes: int = 1 << 30  # all processes of the sandbox together
    max_file_bytes: int = 16 << 20
    max_disk_bytes: int = 128 << 20
    max_inodes: int = 20_000


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What one command did: its combined stdout/stderr and how it ended."""

    output: str
    exit_code: int | None  # None when the sandbox killed it
    timed_out: bool = False
    truncated: bool = False  # output passed max_output_bytes; the command was stopped there
    limits_hit: tuple[str, ...] = ()  # one sentence per bound the command ran into

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.truncated


@cache
def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        hint = _INSTALL_HINT if name == "bwrap" else f"install util-linux (it provides {name})"
        raise EnvironmentUnavailable(
            f"the Bash sandbox needs `{name}`, which is not on PATH; {hint}"
        )
    return path


@cache
def check_sandbox() -> None:
    """Raise :class:`EnvironmentUnavailable` (naming the fix) unless bubblewrap works here."""
    argv = [_tool("bwrap"), "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
            "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64", "/bin/true"]  # fmt: skip
    if os.geteuid() == 0:
        argv = [_tool("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=30, env=_ENV, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentUnavailable(f"bubblewrap could not start: {exc}; {_INSTALL_HINT}") from exc
    if done.returncode != 0:
        raise EnvironmentUnavailable(
            f"bubblewrap cannot create a sandbox here: {done.stderr.strip()}. It needs unprivileged "
            "user namespaces (sysctl kernel.unprivileged_userns_clone=1, or "
            "kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu 24.04+)"
        )


def _processes_of(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if os.stat(entry.path).st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count


class Sandbox:
    """A per-episode file system plus a way to run commands in it (see the module docstring).

    ``Sandbox(fs=1)`` unpacks file system 1; use it as a context manager or call :meth:`close`.
    """

    def __init__(self, *, fs: int, limits: SandboxLimits = SandboxLimits()) -> None:
        check_sandbox()
        self.limits = limits
        self.cwd = "/"
        _remove_leftovers_once()
        self._base = new_sandbox_dir()
        os.chmod(self._base, 0o711)  # the sandbox's own uid must reach root/
        self.root = self._base / "root"
        self.root.mkdir()
        self._mounted = False
        self._uid: int | None = None
        self._cgroup: SandboxCgroup | None = None
        # also runs when the sandbox is garbage-collected or the interpreter exits
        self._release = weakref.finalize(self, release, self._base)
        try:
            if os.geteuid() == 0:
                self._uid = random.randrange(*_PRIVATE_UIDS)
                self._mounted = self._mount_tmpfs()
                self._cgroup = create_cgroup(
                    self._base.name,
                    memory_bytes=limits.max_total_memory_bytes,
                    processes=limits.max_processes,
                )
            build_root(fs, self.root)
            if self._uid is not None:
                self._chown_tree(self._uid)
        except BaseException:
            self.close()
            raise

    @property
    def totals_limited(self) -> bool:
        """Whether memory and processes are bounded for the sandbox as a whole (a cgroup)."""
        return self._cgroup is not None

    @property
    def disk_limited(self) -> bool:
        """Whether the episode's disk use is capped (a size-limited tmpfs; needs root)."""
        return self._mounted

    def run(self, command: str, *, cwd: str | None = None) -> CommandResult:
        """Run ``command`` with ``/bin/bash -c`` in the sandbox, within the limits.

        It starts in the directory the previous command ended in; give ``cwd`` to start elsewhere
        without touching that remembered directory (as the scorer does).
        """
        restore_usr_links(self.root, owner=self._uid)
        events_before = self._cgroup.events() if self._cgroup else (0, 0)
        disk_was_full = self._disk_full()
        read_fd, write_fd = os.pipe()
        try:
            proc = subprocess.Popen(
                self._argv(command, write_fd, cwd or self.cwd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, pass_fds=(write_fd,), start_new_session=True, env=_ENV,
            )  # fmt: skip
        except OSError as exc:
            os.close(read_fd)
            raise EnvironmentUnavailable(
                f"cannot start the sandbox: {exc}; {_INSTALL_HINT}"
            ) from exc
        finally:
            os.close(write_fd)
        try:
            output, timed_out, truncated = self._collect(proc)
            if timed_out or truncated:
                _kill_group(proc)
            exit_code = proc.wait()
            if cwd is None:
                self._update_cwd(read_fd)
        finally:
            if proc.returncode is None:  # interrupted: never leave a sandbox running
                _kill_group(proc)
                proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()
            os.close(read_fd)
        text = output.decode("utf-8", errors="replace")
        hit = self._limits_hit(events_before, disk_was_full, text)
        if timed_out:
            return CommandResult(text, None, timed_out=True, limits_hit=hit)
        if truncated:
            return CommandResult(text, None, truncated=True, limits_hit=hit)
        return CommandResult(text, exit_code, limits_hit=hit)

    def close(self) -> None:
        """Delete the file system (unmounting it if it is a tmpfs). Safe to call twice."""
        self._mounted = False
        self._release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------------------

    def _disk_full(self) -> bool:
        return self._mounted and os.statvfs(self.root).f_bavail == 0

    def _limits_hit(
        self, events_before: tuple[int, int], disk_was_full: bool, output: str
    ) -> tuple[str, ...]:
        """The bounds this command ran into (a full disk counts when it filled up now or when the
        command was refused space)."""
        limits, hit = self.limits, []
        if self._cgroup is not None:
            memory, processes = (a - b for a, b in zip(self._cgroup.events(), events_before))
            if memory:
                hit.append(f"memory limit reached: the sandbox's processes together may use "
                           f"{_mib(limits.max_total_memory_bytes)}; a process was killed")  # fmt: skip
            if processes:
                hit.append(f"process limit reached: at most {limits.max_processes} processes")
        if self._disk_full() and (not disk_was_full or "No space left on device" in output):
            hit.append(f"disk limit reached: the episode's files, /tmp and /dev included, may "
                       f"take {_mib(limits.max_disk_bytes)}")  # fmt: skip
        return tuple(hit)

    def _argv(self, command: str, cwd_fd: int, cwd: str) -> list[str]:
        limits = self.limits
        nproc, memory = (  # with a cgroup, its pids.max is the process bound (it says when hit)
            (limits.max_processes + 16, limits.max_memory_bytes)
            if self._cgroup is not None
            else per_process_limits(limits)
        )
        prefix: list[str] = self._cgroup.enter_argv() if self._cgroup is not None else []
        if self._uid is not None:
            prefix += [
                _tool("setpriv"),
                f"--reuid={self._uid}",
                f"--regid={self._uid}",
                "--clear-groups",
            ]
        else:  # RLIMIT_NPROC counts all of this user's processes
            nproc += _processes_of(os.getuid())
        prefix += [
            _tool("prlimit"), f"--nproc={nproc}", f"--as={memory}",
            f"--fsize={limits.max_file_bytes}", "--core=0", "--",
        ]  # fmt: skip
        bwrap = [
            _tool("bwrap"), "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--uid", "0", "--gid", "0", "--hostname", HOSTNAME,
            "--bind", str(self.root), "/", "--ro-bind", "/usr", "/usr",
            "--proc", "/proc", *_DEVICES, "--chdir", "/",
        ]  # fmt: skip
        trapped = f"trap 'pwd >&3' EXIT; {command}"
        return [
            *prefix,
            *bwrap,
            "/usr/bin/bash",
            "-c",
            _WRAPPER.format(fd=cwd_fd),
            "bash",
            cwd,
            trapped,
        ]

    def _collect(self, proc: subprocess.Popen[bytes]) -> tuple[bytes, bool, bool]:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        buffer = bytearray()
        deadline = time.monotonic() + self.limits.timeout_s
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return bytes(buffer), True, False
                if not selector.select(remaining):
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    return bytes(buffer), False, False
                buffer += chunk
                if len(buffer) > self.limits.max_output_bytes:
                    return bytes(buffer[: self.limits.max_output_bytes]), False, True

    def _update_cwd(self, read_fd: int) -> None:
        os.set_blocking(read_fd, False)
        try:
            reported = os.read(read_fd, 8192).decode("utf-8", errors="replace")
        except BlockingIOError:
            return
        lines = reported.splitlines()
        if len(lines) == 1 and lines[0].startswith("/") and "\0" not in lines[0]:
            self.cwd = lines[0]

    def _mount_tmpfs(self) -> bool:
        options = f"size={self.limits.max_disk_bytes},nr_inodes={self.limits.max_inodes},mode=755"
        try:
            done = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(self.root)],
                capture_output=True, check=False, timeout=30,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0

    def _chown_tree(self, uid: int) -> None:
        os.chown(self.root, uid, uid)
        for directory, dirs, files in os.walk(self.root):
            for name in dirs + files:
                os.chown(os.path.join(directory, name), uid, uid, follow_symlinks=False)


def per_process_limits(limits: SandboxLimits) -> tuple[int, int]:
    """(processes, bytes per process) when no cgroup bounds the total: chosen so that their product
    stays within ``max_total_memory_bytes``, with 64 MiB each where the total allows and never
    fewer than 8 processes (a command's shell, pipes and the sandbox's own take about 5)."""
    total = limits.max_total_memory_bytes
    processes = min(limits.max_processes, max(8, total // (64 << 20)))
    return processes, min(limits.max_memory_bytes, total // processes)


def _mib(size: int) -> str:
    return f"{size >> 20} MiB"


@cache
def _remove_leftovers_once() -> None:
    remove_leftovers()


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"{entry.path}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the sandbox: bwrap's child is the init of the sandbox's pid namespace, so killing it
    makes the kernel kill and reap every process in there, wherever their sessions are; bwrap
    then exits. Its process group is killed too if it does not."""
    for child in _children(proc.pid):
        try:
            os.kill(child, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
