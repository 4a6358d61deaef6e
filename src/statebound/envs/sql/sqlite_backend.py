"""The embedded backend: the MySQL dump converted once to one SQLite file per database.

Each episode gets an in-memory copy (SQLite's backup API), so nothing an agent does reaches the
cached files or another episode; an authorizer and connection caps (``isolation``) refuse what
would reach past that copy (ATTACH, VACUUM INTO, pragmas, extensions). MySQL behaviour that decides rewards is emulated:
case- and accent-insensitive, trailing-space-insensitive comparison of text columns
(``utf8mb4_general_ci``), lower-case ``SHOW TABLES`` and ``DESC`` tuples in MySQL's shape.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import tempfile
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from statebound.envs.sql.backend import QueryFailed, Rows
from statebound.envs.sql.budget import DEFAULT_BUDGET, ResultBudget, fetch_within
from statebound.envs.sql.dump import Database, Table, parse_dump
from statebound.envs.sql.isolation import SQLITE_MAX_STATEMENT_MEMORY, confine_sqlite
from statebound.envs.sql.tasks import dump_path
from statebound.envs.sql.watchdog import StatementWatch

__all__ = ["MYSQL_COLLATION", "SqliteBackend", "SqliteSession", "default_cache_dir"]

MYSQL_COLLATION = "mysql_general_ci"
_TEXT_TYPES = ("char", "varchar", "text", "tinytext", "mediumtext", "longtext", "enum", "set")
_CONVERTER_VERSION = "1"


def default_cache_dir() -> Path:
    """``$STATEBOUND_CACHE`` or ``$XDG_CACHE_HOME/statebound`` or ``~/.cache/statebound``."""
    if explicit := os.environ.get("STATEBOUND_CACHE"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "statebound"


@lru_cache(maxsize=65536)
def _collation_key(text: str) -> str:
    """What ``utf8mb4_general_ci`` compares: accents and case folded, trailing spaces ignored."""
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).upper().rstrip(" ")


def _mysql_compare(left: str, right: str) -> int:
    a, b = _collation_key(left), _collation_key(right)
    return (a > b) - (a < b)


def _prepare(conn: sqlite3.Connection) -> None:
    conn.create_collation(MYSQL_COLLATION, _mysql_compare)


class SqliteBackend:
    """Converted Spider databases under a cache directory keyed by the dump's hash."""

    name = "sqlite"

    def __init__(self, *, cache_dir: Path | str | None = None, dump: Path | str | None = None) -> None:
        self._dump = Path(dump) if dump else dump_path()
        root = Path(cache_dir) if cache_dir else default_cache_dir()
        digest = hashlib.sha256(self._dump.read_bytes()).hexdigest()[:16]
        self.directory = root / "intercode-sql" / f"{digest}-v{_CONVERTER_VERSION}"
        if not (self.directory / "schema.json").exists():
            _convert(self._dump, self.directory)
        self._schema: dict[str, dict[str, dict]] = json.loads((self.directory / "schema.json").read_text())

    def databases(self) -> Sequence[str]:
        return sorted(self._schema)

    def open_session(self, database: str, *, timeout_s: float,
                     budget: ResultBudget = DEFAULT_BUDGET) -> SqliteSession:
        if database not in self._schema:
            raise QueryFailed(f"Unknown database '{database}'")
        return SqliteSession(self.directory / f"{database}.sqlite", database, self._schema[database],
                             timeout_s, budget)

    def pristine_session(self, database: str, *, timeout_s: float,
                         budget: ResultBudget = DEFAULT_BUDGET) -> SqliteSession:
        """Every session is an untouched copy here."""
        return self.open_session(database, timeout_s=timeout_s, budget=budget)

    def close(self) -> None:
        return None


class SqliteSession:
    """An in-memory copy of one database, confined to itself, with MySQL's SHOW TABLES and DESC."""

    def __init__(self, path: Path, database: str, schema: dict[str, dict], timeout_s: float,
                 budget: ResultBudget = DEFAULT_BUDGET) -> None:
        self.database = database
        self._schema = schema
        self._timeout_s = timeout_s
        self._budget = budget
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        _prepare(self._conn)
        source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            source.backup(self._conn)
        finally:
            source.close()
        self._schema_text = self._schema_now()
        self._guard = confine_sqlite(self._conn)

    def changes(self) -> int:
        """Rows inserted, updated or deleted so far, plus one when a table was made, dropped or altered."""
        return self._conn.total_changes + (self._schema_now() != self._schema_text)

    def _schema_now(self) -> str:
        return "\n".join(sql or "" for (sql,) in self._conn.execute("SELECT sql FROM sqlite_master ORDER BY name"))

    def execute(self, sql: str) -> Rows | None:
        emulated = self._emulate(sql)
        if emulated is not None:
            return emulated
        watch = StatementWatch(timeout_s=self._timeout_s, memory_bytes=SQLITE_MAX_STATEMENT_MEMORY)
        self._conn.set_progress_handler(watch, 10_000)
        self._guard.refusal = None
        try:
            cursor = self._conn.execute(sql)
            rows = fetch_within(cursor, self._budget) if cursor.description is not None else None
            cursor.close()  # stops the statement: rows past the budget are never computed
        except sqlite3.OperationalError as err:
            if str(err) == "interrupted":
                raise QueryFailed(watch.message()) from err
            raise QueryFailed(self._guard.refusal or str(err)) from err
        except (sqlite3.Error, ValueError, OverflowError) as err:
            raise QueryFailed(self._guard.refusal or str(err)) from err
        finally:
            self._conn.set_progress_handler(None, 0)
        return rows

    def close(self) -> None:
        self._conn.close()

    # -- MySQL statements SQLite does not have -------------------------------------------------
    _SHOW_TABLES = re.compile(r"^\s*SHOW\s+(?:FULL\s+)?TABLES\s*;?\s*$", re.IGNORECASE)
    _DESCRIBE = re.compile(
        r"^\s*(?:DESC|DESCRIBE|EXPLAIN|SHOW\s+(?:FULL\s+)?COLUMNS\s+(?:FROM|IN))\s+"
        r"(?:[`\"]?\w+[`\"]?\.)?[`\"]?(\w+)[`\"]?\s*;?\s*$",
        re.IGNORECASE,
    )

    def _emulate(self, sql: str) -> Rows | None:
        if self._SHOW_TABLES.match(sql):
            names = self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                "AND name NOT LIKE 'sqlite_%' ORDER BY lower(name)"
            ).fetchall()
            return [(name.lower(),) for (name,) in names]
        if match := self._DESCRIBE.match(sql):
            return self._describe(match.group(1))
        return None

    def _describe(self, table: str) -> Rows:
        info = self._conn.execute(f'PRAGMA table_info("{table}")').fetchall()
        if not info:
            raise QueryFailed(f"Table '{self.database}.{table}' doesn't exist")
        known = {c[0]: c for c in self._schema.get(table.lower(), {}).get("columns", [])}
        rows: Rows = []
        for _, name, decl_type, notnull, default, pk in info:
            if name in known:
                rows.append(tuple(known[name]))
                continue
            rows.append((name, _mysql_type(decl_type), "NO" if notnull or pk else "YES",
                         "PRI" if pk else "", default, ""))
        return rows


def _mysql_type(decl_type: str) -> str:
    return re.sub(rf"\s+COLLATE\s+{MYSQL_COLLATION}", "", decl_type, flags=re.IGNORECASE).lower()


# -- conversion ---------------------------------------------------------------------------------

def _convert(dump: Path, directory: Path) -> None:
    """Write ``<db>.sqlite`` per database plus ``schema.json`` (DESC rows), atomically."""
    databases = parse_dump(dump.read_text(encoding="utf-8"))
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".convert-", dir=directory.parent))
    schema: dict[str, dict[str, dict]] = {}
    for database in databases.values():
        schema[database.name] = _write_database(database, staging / f"{database.name}.sqlite")
    (staging / "schema.json").write_text(json.dumps(schema, indent=1))
    try:
        staging.rename(directory)
    except OSError:  # another process finished first; its copy is identical
        for child in staging.iterdir():
            child.unlink()
        staging.rmdir()


def _write_database(database: Database, path: Path) -> dict[str, dict]:
    conn = sqlite3.connect(path, isolation_level=None)
    _prepare(conn)
    try:
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("BEGIN")
        for table in database.tables.values():
            conn.execute(_create_table_sql(table))
            for insert in table.inserts:
                conn.execute(insert)
        conn.execute("COMMIT")
    finally:
        conn.close()
    return {
        key: {"name": table.name, "columns": [list(c.desc_row()) for c in table.columns]}
        for key, table in database.tables.items()
    }


def _create_table_sql(table: Table) -> str:
    lines = []
    for column in table.columns:
        parts = [f'"{column.name}"', column.type]
        if column.type.split("(")[0].lower() in _TEXT_TYPES:
            parts.append(f"COLLATE {MYSQL_COLLATION}")
        if not column.nullable:
            parts.append("NOT NULL")
        if column.default is not None:
            parts.append("DEFAULT " + _default_literal(column.default))
        lines.append(" ".join(parts))
    if table.primary_key:
        lines.append("PRIMARY KEY (" + ", ".join(f'"{c}"' for c in table.primary_key) + ")")
    return f'CREATE TABLE "{table.name}" (\n  ' + ",\n  ".join(lines) + "\n)"


def _default_literal(value: str) -> str:
    if value.upper() == "CURRENT_TIMESTAMP":
        return "CURRENT_TIMESTAMP"
    return "'" + value.replace("'", "''") + "'"
