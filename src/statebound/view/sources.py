"""What ``statebound view`` serves: the run directories and live-flow stores named on its command
line, each under a short URL-safe name; anything else is refused with one line naming it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from statebound.bench.packed import PACKED_NAME, STORE_NAME, has_store, run_dirs_below
from statebound.errors import DefinitionError
from statebound.report.task_grid import url_name

__all__ = ["Sources", "find_sources"]


@dataclass(frozen=True, slots=True)
class Sources:
    """Run directories and checkpoint stores by name (the name is their URL segment)."""

    runs: dict[str, Path] = field(default_factory=dict)
    stores: dict[str, Path] = field(default_factory=dict)

    def add(self, kind: dict[str, Path], path: Path, label: str) -> None:
        """Add ``path`` to ``kind`` (``runs`` or ``stores``) under ``label`` made URL-safe and unique."""
        base = name = url_name(label)
        taken = self.runs.keys() | self.stores.keys()
        number = 1
        while name in taken:
            number += 1
            name = f"{base}-{number}"
        kind[name] = path


def _is_checkpoint_store(path: Path) -> bool:
    """Whether ``path`` is a live-flow store (opened read-only; a foreign file is refused)."""
    from statebound.errors import CheckpointError
    from statebound.flow.live import SQLiteCheckpointer

    try:
        SQLiteCheckpointer(path, read_only=True).close()
    except CheckpointError:
        return False
    return True


def _is_run(directory: Path) -> bool:
    from statebound.bench.store import RunStore
    from statebound.errors import StateboundError

    try:
        RunStore(directory, read_only=True).close()
    except StateboundError:
        return False
    return True


def _label(path: Path, root: Path) -> str:
    """A run below a directory given is named by its path under it (``sql/react``)."""
    relative = str(path.relative_to(root))
    return relative if relative != "." else path.resolve().name


_STORE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
_SQLITE_HEADER = b"SQLite format 3\x00"


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER
    except OSError:
        return False


def _stores_below(root: Path, runs: Sequence[Path]) -> list[Path]:
    """The live-flow stores in ``root`` or below it (SQLite files named ``*.sqlite``, ``*.sqlite3``
    or ``*.db``), leaving out run stores, files inside runs and hidden folders (``.venv``, ``.git``)."""
    inside = set(runs)
    found = {path for suffix in _STORE_SUFFIXES for path in root.rglob(f"*{suffix}")
             if path.name != STORE_NAME and path.parent not in inside
             and not any(part.startswith(".") for part in path.relative_to(root).parts[:-1])}
    return [path for path in sorted(found) if path.is_file() and _is_sqlite(path) and _is_checkpoint_store(path)]


def find_sources(paths: Sequence[str | Path]) -> Sources:
    """The runs and stores at ``paths``: a run directory, a ``run.sqlite`` file, a live-flow store
    (a SQLite file), or a directory holding runs or stores below it. A :class:`DefinitionError`
    names the first path that is none of these."""
    sources = Sources()
    for given in map(Path, paths):
        if given.is_dir() and has_store(given) and _is_run(given):
            sources.add(sources.runs, given, given.resolve().name)
        elif given.is_file() and given.name in (STORE_NAME, PACKED_NAME) and _is_run(given.parent):
            sources.add(sources.runs, given.parent, given.parent.resolve().name)
        elif given.is_file() and _is_checkpoint_store(given):
            sources.add(sources.stores, given, given.stem)
        elif given.is_dir():
            runs = [run for run in run_dirs_below(given) if _is_run(run)]
            stores = _stores_below(given, runs)
            if not runs and not stores:
                raise DefinitionError(_refusal(given))
            for run in runs:
                sources.add(sources.runs, run, _label(run, given))
            for store in stores:
                sources.add(sources.stores, store, _label(store.with_suffix(""), given))
        else:
            raise DefinitionError(_refusal(given))
    return sources


def _refusal(path: Path) -> str:
    if not path.exists():
        return f"{path} does not exist; give run directories (made by statebound eval) or live-flow stores"
    if path.is_dir():
        return (f"{path} holds no run ({STORE_NAME}) and no live-flow store (a *.sqlite or *.db file made by "
                "statebound run FLOW --store PATH), here or below")
    return f"{path} is neither a run store nor a live-flow store (statebound run FLOW --store PATH makes one)"
