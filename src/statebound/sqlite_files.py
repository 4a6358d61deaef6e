"""Reading a SQLite file that something else may have written, without writing to it.

A store in WAL mode (a writer killed, or a file committed in that mode) comes with ``-wal``/``-shm``
files that a read-only connection cannot fold in or remove, and a store in a read-only place
cannot get the ``-shm`` file a reader needs. :func:`reader` opens such a file so that no row a
writer stored is missed and nothing is written, whatever the place.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path
from urllib.parse import quote

__all__ = ["reader"]


def reader(path: Path, *, fold_log: bool = True) -> tuple[sqlite3.Connection, tempfile.TemporaryDirectory[str] | None]:
    """A connection to ``path`` that never writes a row, and the temporary copy it reads when it
    reads one. With ``fold_log``, read through a read-write connection that refuses writes
    (``query_only``): when it is the last to close, SQLite folds a killed writer's log into the
    file (what the writer would have done) and removes the log files; a running writer's log is
    left to it. Without it (the file's bytes must stay as they are), and when this user may not
    write there, read-only; and in a read-only place where a killed writer's log cannot be read in
    place (no ``-shm`` beside it, and none can be made), from a copy of the file and its log, so
    that no row is missed. A file that is not a database raises ``sqlite3.DatabaseError``."""
    uri = f"file:{quote(str(path.absolute()))}"
    for mode in ("rw", "ro") if fold_log else ("ro",):
        db = sqlite3.connect(f"{uri}?mode={mode}", uri=True, isolation_level=None, timeout=30,
                             check_same_thread=False)
        try:
            if mode == "rw":
                db.execute("PRAGMA query_only=ON")
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db, None
        except sqlite3.DatabaseError as error:
            db.close()
            if not isinstance(error, sqlite3.OperationalError):  # not a database at all
                raise
    copy = tempfile.TemporaryDirectory(prefix="statebound-read-")
    try:
        for suffix in ("", "-wal"):
            if (source := path.with_name(path.name + suffix)).is_file():
                shutil.copyfile(source, Path(copy.name) / (path.name + suffix))
        db = sqlite3.connect(Path(copy.name) / path.name, isolation_level=None, timeout=30, check_same_thread=False)
        db.execute("PRAGMA query_only=ON")
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        copy.cleanup()
        raise
    return db, copy
