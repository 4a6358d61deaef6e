"""The InterCode-Bash tasks and the file systems they expect.

Tasks come from ``data/intercode/bash/nl2bash_fs_{1..4}.json``; a task's ID is
``<file system>-<0-based position in its file>`` (``1-0`` ... ``4-26``). File systems 1-3 are tar
files whose paths are relative to ``/``; file system 4 is empty. :func:`build_root` lays one out in a
directory that a sandbox then presents as ``/``, together with the mount points, ``/usr`` symlinks
and a minimal synthetic ``/etc``.
"""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from statebound.errors import DefinitionError

__all__ = [
    "FILE_SYSTEMS",
    "HOSTNAME",
    "BashTask",
    "build_root",
    "data_dir",
    "get_task",
    "load_tasks",
    "restore_usr_links",
]  # fmt: skip

FILE_SYSTEMS = (1, 2, 3, 4)
HOSTNAME = "sandbox"

# What a Debian root needs around the host's read-only /usr (mount points and merged-/usr links).
_MOUNT_POINTS = ("usr", "proc", "dev", "tmp", "etc", "root")
_USR_LINKS = {"bin": "usr/bin", "sbin": "usr/sbin", "lib": "usr/lib", "lib64": "usr/lib64"}
# /dev's links into /proc (the sandbox binds only device nodes into /dev; see sandbox._DEVICES)
_DEV_LINKS = {f"dev/{name}": target for name, target in (
    ("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"))}  # fmt: skip
_ETC_FILES = {
    "passwd": "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
    "group": "root:x:0:\nnogroup:x:65534:\n",
    "hostname": f"{HOSTNAME}\n",
    "hosts": f"127.0.0.1\tlocalhost\n127.0.1.1\t{HOSTNAME}\n",
    "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
}


@dataclass(frozen=True, slots=True)
class BashTask:
    """One InterCode-Bash task: a question, the gold command and the file system it runs on."""

    id: str
    fs: int
    query: str
    gold: str


def data_dir() -> Path:
    """The packaged InterCode-Bash data (task files and file-system tars)."""
    return Path(str(resources.files("statebound") / "data" / "intercode" / "bash"))


@cache
def load_tasks() -> tuple[BashTask, ...]:
    """All 200 tasks, file system by file system, in file order."""
    tasks: list[BashTask] = []
    for fs in FILE_SYSTEMS:
        records = json.loads((data_dir() / f"nl2bash_fs_{fs}.json").read_text())
        tasks.extend(
            BashTask(id=f"{fs}-{i}", fs=fs, query=r["query"], gold=r["gold"])
            for i, r in enumerate(records)
        )
    return tuple(tasks)


def get_task(task_id: str) -> BashTask:
    """The task called ``task_id`` (e.g. ``"2-14"``)."""
    for task in load_tasks():
        if task.id == task_id:
            return task
    raise DefinitionError(
        f"unknown InterCode-Bash task {task_id!r}; IDs are '<file system>-<index>' from '1-0' to '4-26'"
    )


def build_root(fs: int, root: Path) -> None:
    """Lay out file system ``fs`` in the empty directory ``root`` (which becomes the sandbox's ``/``)."""
    if fs not in FILE_SYSTEMS:
        raise DefinitionError(f"unknown file system {fs!r}; choose one of {FILE_SYSTEMS}")
    tar_path = data_dir() / f"testbed_fs_{fs}.tar"
    if tar_path.exists():
        with tarfile.open(tar_path) as archive:
            archive.extractall(root, filter="tar")
    for name in _MOUNT_POINTS:
        (root / name).mkdir(exist_ok=True)
    restore_usr_links(root)
    for name, text in _ETC_FILES.items():
        (root / "etc" / name).write_text(text)
    _link_host_etc(root / "etc")


def restore_usr_links(root: Path, *, owner: int | None = None) -> None:
    """(Re)create ``/bin``, ``/sbin``, ``/lib``, ``/lib64`` as links into ``/usr``; without them no
    program starts (the ELF loader is ``/lib64/ld-linux-x86-64.so.2``), so a command that deleted
    or replaced them must not break the next one; likewise ``/dev/fd`` and ``/dev/std*``. Nothing here
    follows a link."""
    if not (root / "dev").is_dir():
        (root / "dev").unlink(missing_ok=True)
        (root / "dev").mkdir()
    for name, target in (_USR_LINKS | _DEV_LINKS).items():
        path = root / name
        if path.is_symlink() and os.readlink(path) == target:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif path.is_symlink() or path.exists():
            path.unlink()
        os.symlink(target, path)
        if owner is not None:
            os.chown(path, owner, owner, follow_symlinks=False)


def _link_host_etc(etc: Path) -> None:
    """Give the sandbox the host's links into /usr that programs rely on (``awk`` is
    ``/usr/bin/awk -> /etc/alternatives/awk -> /usr/bin/mawk`` on Debian) and the loader cache."""
    alternatives = Path("/etc/alternatives")
    if alternatives.is_dir():
        (etc / "alternatives").mkdir(exist_ok=True)
        for entry in os.scandir(alternatives):
            if entry.is_symlink() and not entry.name.endswith(".gz"):
                target = os.readlink(entry.path)
                if target.startswith("/usr/"):
                    os.symlink(target, etc / "alternatives" / entry.name)
    localtime = Path("/etc/localtime")
    if localtime.is_symlink() and os.readlink(localtime).startswith("/usr/"):
        os.symlink(os.readlink(localtime), etc / "localtime")
    cache = Path("/etc/ld.so.cache")
    if cache.is_file():
        (etc / "ld.so.cache").write_bytes(cache.read_bytes())
