"""Run stores kept compressed: ``run.sqlite.xz`` beside (or instead of) ``run.sqlite``.

The committed benchmark records hold their stores packed (an episode's JSON compresses about 50
to 100 times). Readers open a packed store through a decompressed copy in the user's cache (made
once per version of the file); a writer (``statebound eval --resume``) unpacks it in place and
works on ``run.sqlite``, which then wins over the packed file until it is packed again."""

from __future__ import annotations

import hashlib
import lzma
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["PACKED_NAME", "STORE_NAME", "has_store", "pack", "packed_store", "readable_copy", "run_dirs_below",
           "unpack_in_place"]

STORE_NAME = "run.sqlite"
PACKED_NAME = STORE_NAME + ".xz"
_CHUNK = 1 << 20


def packed_store(run_dir: Path) -> Path:
    """Where ``run_dir``'s packed store is (or would be)."""
    return run_dir / PACKED_NAME


def has_store(run_dir: Path) -> bool:
    """Whether ``run_dir`` holds a run store, plain or packed."""
    return (run_dir / STORE_NAME).is_file() or packed_store(run_dir).is_file()


def run_dirs_below(root: Path) -> Iterator[Path]:
    """Every directory at or below ``root`` holding a store, plain or packed, in path order."""
    found = {path.parent for name in (STORE_NAME, PACKED_NAME) for path in root.rglob(name)}
    yield from sorted(found)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "statebound" / "stores"


def readable_copy(packed: Path) -> Path:
    """A decompressed copy of ``packed`` to read, made once per version of the file (its path,
    size and modification time name the copy) and reused after that."""
    status = packed.stat()
    key = hashlib.sha256(f"{packed.resolve()}\0{status.st_size}\0{status.st_mtime_ns}".encode()).hexdigest()[:24]
    copy = _cache_dir() / f"{key}.sqlite"
    if not copy.is_file():
        copy.parent.mkdir(parents=True, exist_ok=True)
        _decompress(packed, copy)
    return copy


def unpack_in_place(run_dir: Path) -> Path:
    """``run_dir/run.sqlite`` decompressed from the packed store (which is left as it is)."""
    store = run_dir / STORE_NAME
    _decompress(packed_store(run_dir), store)
    return store


def _decompress(source: Path, target: Path) -> None:
    """``source`` (xz) decompressed to ``target``, which appears whole or not at all."""
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{target.name}.", delete=False) as out:
        try:
            with lzma.open(source) as packed:
                shutil.copyfileobj(packed, out, _CHUNK)
        except BaseException:
            os.unlink(out.name)
            raise
    os.replace(out.name, target)


def pack(run_dir: Path) -> tuple[int, int]:
    """Write ``run_dir/run.sqlite.xz`` from ``run_dir/run.sqlite``: a consistent snapshot (SQLite's
    online backup, so a run writing the store is neither stopped nor caught half-way), vacuumed,
    then compressed. The plain store is kept. Returns the plain and packed sizes in bytes."""
    store = run_dir / STORE_NAME
    with tempfile.TemporaryDirectory(dir=run_dir, prefix=".pack-") as work:
        snapshot = Path(work) / STORE_NAME
        source = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30)
        copy = sqlite3.connect(snapshot)
        try:
            source.backup(copy)
            copy.execute("PRAGMA journal_mode=DELETE")
            copy.execute("VACUUM")
        finally:
            copy.close()
            source.close()
        compressed = Path(work) / PACKED_NAME
        with open(snapshot, "rb") as plain, lzma.open(compressed, "wb", preset=6) as out:
            shutil.copyfileobj(plain, out, _CHUNK)
        os.replace(compressed, packed_store(run_dir))
        return store.stat().st_size, packed_store(run_dir).stat().st_size
