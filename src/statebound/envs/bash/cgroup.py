"""A control group holding every process of one Bash sandbox: memory and process count in total.

Per-process limits (``prlimit``) cannot bound a sandbox as a whole: 64 processes of 1 GiB each are
64 GiB. A cgroup can. :func:`create_cgroup` makes one below the evaluating process's own cgroup
(v1 ``memory`` + ``pids`` hierarchies, or the v2 unified one) when the machine lets it, else
returns ``None`` and the sandbox falls back to per-process limits whose product stays within the
total (see :func:`statebound.envs.bash.sandbox.per_process_limits`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SandboxCgroup", "create_cgroup", "remove_cgroups_named"]

_ROOT = Path("/sys/fs/cgroup")
# Moves the shell into each cgroup given before "--", then becomes the command after it.
_ENTER = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


def _own_path(controller: str) -> str:
    """This process's cgroup path in the hierarchy of ``controller`` ("" for v2)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path.lstrip("/")
    raise LookupError(controller)


def _v1_dirs() -> dict[str, Path] | None:
    try:
        dirs = {c: _ROOT / c / _own_path(c) for c in ("memory", "pids")}
    except (OSError, LookupError):
        return None
    return dirs if all(d.is_dir() for d in dirs.values()) else None


def _v2_dir() -> Path | None:
    try:
        own = _ROOT / _own_path("")
    except (OSError, LookupError):
        return None
    try:
        enabled = (own / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return own if {"memory", "pids"} <= set(enabled) else None


@dataclass(frozen=True, slots=True)
class SandboxCgroup:
    """The cgroup directories of one sandbox (one per v1 hierarchy, or one v2 directory)."""

    dirs: tuple[Path, ...]
    version: int

    def enter_argv(self) -> list[str]:
        """An argv prefix that runs the rest of the argv inside this cgroup."""
        return ["/bin/sh", "-c", _ENTER, "sh", *(str(d / "cgroup.procs") for d in self.dirs), "--"]

    def events(self) -> tuple[int, int]:
        """How often (memory, processes) hit their bound so far; compare before and after."""
        if self.version == 1:
            memory, pids = self.dirs
            return _event(memory / "memory.oom_control", "oom_kill"), _event(
                pids / "pids.events", "max"
            )
        (only,) = self.dirs
        return _event(only / "memory.events", "oom_kill"), _event(only / "pids.events", "max")

    def remove(self) -> None:
        for directory in self.dirs:
            try:
                directory.rmdir()
            except OSError:
                pass


def _event(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def create_cgroup(name: str, *, memory_bytes: int, processes: int) -> SandboxCgroup | None:
    """A new cgroup ``name`` bounding memory (swap included) and processes, or ``None``."""
    if os.geteuid() != 0:
        return None
    v1 = _v1_dirs()
    if v1 is not None:
        settings = {
            v1["memory"] / name: {"memory.limit_in_bytes": memory_bytes,
                                  "memory.memsw.limit_in_bytes": memory_bytes},
            v1["pids"] / name: {"pids.max": processes},
        }  # fmt: skip
        version = 1
    else:
        v2 = _v2_dir()
        if v2 is None:
            return None
        settings = {
            v2 / name: {"memory.max": memory_bytes, "memory.swap.max": 0, "pids.max": processes}
        }
        version = 2
    group = SandboxCgroup(tuple(settings), version)
    try:
        for directory, files in settings.items():
            directory.mkdir()
            for file, value in files.items():
                path = directory / file
                if path.exists() or file != "memory.memsw.limit_in_bytes":  # no swap accounting
                    path.write_text(str(value))
    except OSError:
        group.remove()
        return None
    return group


def remove_cgroups_named(name: str) -> None:
    """Remove a leftover sandbox's cgroups, wherever they were made (empty ones only)."""
    for directory in (*(_v1_dirs() or {}).values(), _v2_dir()):
        if directory is not None:
            try:
                (directory / name).rmdir()
            except OSError:
                pass
