"""Sandbox folders: named after the process that owns them, removed when that process is gone.

A sandbox lives in ``$TMPDIR/statebound-bash-<pid>-<random>`` (as root its ``root/`` is a tmpfs
mount, and it has cgroups of the same name). A run killed with ``kill -9`` cannot clean up, so
:func:`remove_leftovers` removes the folders, mounts and cgroups of owners that no longer run; the
Bash environment calls it when it first starts a sandbox, and ``statebound clean`` on demand.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from statebound.envs.bash.cgroup import remove_cgroups_named
from statebound.processes import process_alive

__all__ = ["PREFIX", "new_sandbox_dir", "release", "remove_leftovers"]

PREFIX = "statebound-bash-"
_OWNED = re.compile(re.escape(PREFIX) + r"(\d+)-")


def new_sandbox_dir() -> Path:
    """A fresh private folder whose name records this process's pid."""
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))


def release(base: Path) -> None:
    """Unmount ``base/root`` if it is a mount, then delete ``base`` and its cgroups."""
    root = base / "root"
    if os.path.ismount(root):
        subprocess.run(["umount", "-l", str(root)], capture_output=True, check=False)
    if base.exists():
        shutil.rmtree(base, onerror=_make_writable_and_retry)
    remove_cgroups_named(base.name)


def remove_leftovers(directory: Path | None = None) -> list[Path]:
    """Remove the sandbox folders in ``directory`` (the temp dir) whose owner is dead; return them.

    Folders without a pid in their name (made by older versions) are left alone: their owner
    cannot be told."""
    removed = []
    for entry in Path(directory or tempfile.gettempdir()).glob(PREFIX + "*"):
        match = _OWNED.match(entry.name)
        if match and entry.is_dir() and not process_alive(int(match.group(1))):
            release(entry)
            removed.append(entry)
    return removed


def _make_writable_and_retry(function, path, _exc) -> None:  # type: ignore[no-untyped-def]
    """rmtree helper: a command may have left directories without write permission."""
    try:
        parent = os.path.dirname(path)
        os.chmod(parent, os.stat(parent).st_mode | stat.S_IRWXU)
        function(path)
    except OSError:
        pass
