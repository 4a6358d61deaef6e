"""What model-written SQL may do in an episode: each backend's rules as data, each with its reason.

SQLite (embedded): an authorizer is asked about every action a statement would take while it
is compiled and refuses those that reach past the episode's in-memory copy (another file,
native code, connection settings); connection limits and size caps stand behind it.
MySQL/MariaDB: the server's grants are the boundary (``scripts/mariadb.sh``); statements that
would commit the episode's transaction, or that touch files, are refused before they are sent,
so the agent reads the reason. Refusals read ``... not allowed in this environment: <reason>``
and reach the agent as any failed query does. docs/intercode-sql.md tabulates these rules.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "MYSQL_ALLOWED_FIRST_WORDS",
    "MYSQL_REFUSED_PHRASES",
    "NOT_ALLOWED",
    "SQLITE_ALLOWED_ACTIONS",
    "SQLITE_ALLOWED_PRAGMAS",
    "SQLITE_DENIED_ACTIONS",
    "SQLITE_DENIED_FUNCTIONS",
    "SQLITE_DENIED_TABLES",
    "SQLITE_LIMITS",
    "SQLITE_MAX_DATABASE_BYTES",
    "SQLITE_MAX_STATEMENT_MEMORY",
    "SqliteGuard",
    "confine_sqlite",
    "mysql_refusal",
    "sqlite_refusal",
]

NOT_ALLOWED = "not allowed in this environment"

# -- SQLite: the authorizer's rules (sqlite3.Connection.set_authorizer action codes) ------------

_ALLOWED_GROUPS: dict[str, tuple[str, ...]] = {
    "queries and row changes act on the episode's in-memory copy only": (
        "SQLITE_SELECT", "SQLITE_READ", "SQLITE_RECURSIVE", "SQLITE_INSERT", "SQLITE_UPDATE",
        "SQLITE_DELETE"),
    "schema changes act on the in-memory copy and end with the episode (as DROP TABLE does)": (
        "SQLITE_CREATE_TABLE", "SQLITE_CREATE_INDEX", "SQLITE_CREATE_VIEW", "SQLITE_CREATE_TRIGGER",
        "SQLITE_CREATE_TEMP_TABLE", "SQLITE_CREATE_TEMP_INDEX", "SQLITE_CREATE_TEMP_VIEW",
        "SQLITE_CREATE_TEMP_TRIGGER", "SQLITE_DROP_TABLE", "SQLITE_DROP_INDEX", "SQLITE_DROP_VIEW",
        "SQLITE_DROP_TRIGGER", "SQLITE_DROP_TEMP_TABLE", "SQLITE_DROP_TEMP_INDEX",
        "SQLITE_DROP_TEMP_VIEW", "SQLITE_DROP_TEMP_TRIGGER", "SQLITE_ALTER_TABLE", "SQLITE_REINDEX",
        "SQLITE_ANALYZE"),
    "transactions and savepoints cover the in-memory copy only": (
        "SQLITE_TRANSACTION", "SQLITE_SAVEPOINT"),
    "allowed by name: see SQLITE_ALLOWED_PRAGMAS": ("SQLITE_PRAGMA",),
    "allowed unless named in SQLITE_DENIED_FUNCTIONS": ("SQLITE_FUNCTION",),
}

SQLITE_ALLOWED_ACTIONS: Mapping[int, str] = MappingProxyType({
    getattr(sqlite3, code): reason for reason, codes in _ALLOWED_GROUPS.items() for code in codes})
"""Action code -> why an episode needs it. Codes in neither table are refused."""

SQLITE_DENIED_ACTIONS: Mapping[int, tuple[str, str]] = MappingProxyType({
    sqlite3.SQLITE_ATTACH: (
        "ATTACH (and VACUUM, which attaches the file it writes)",
        "it opens or creates a database file outside the episode"),
    sqlite3.SQLITE_DETACH: ("DETACH", "no other database can be attached"),
    sqlite3.SQLITE_CREATE_VTABLE: (
        "CREATE VIRTUAL TABLE",
        "virtual-table modules (FTS3/4/5, R-Tree) are native code with hooks such as FTS3's "
        "tokenizer pointers; no task needs one"),
    sqlite3.SQLITE_DROP_VTABLE: ("DROP VIRTUAL TABLE", "no virtual table can be created"),
})
"""Action code -> (what the agent wrote, why it is refused)."""

SQLITE_ALLOWED_PRAGMAS: Mapping[str, str] = MappingProxyType({
    "table_info": "lists a table's columns (DESC is emulated with it)",
    "table_xinfo": "lists a table's columns, hidden ones included",
    "table_list": "lists the tables",
    "index_list": "lists a table's indexes",
    "index_info": "lists an index's columns",
    "index_xinfo": "lists an index's columns and keys",
    "foreign_key_list": "lists a table's foreign keys",
})
"""Read-only listings of the episode's own schema. Every other pragma is refused: they change the
connection or the file (writable_schema, journal_mode, temp_store, max_page_count, ...) or name
files (database_list), and a task needs none of them."""

SQLITE_DENIED_FUNCTIONS: Mapping[str, str] = MappingProxyType({
    "load_extension": "it loads native code from a file",
    "fts3_tokenizer": "with two arguments it installs a tokenizer from a raw memory address "
                      "(this build enables it: SQLITE_ENABLE_FTS3_TOKENIZER)",
})

SQLITE_DENIED_TABLES: Mapping[str, str] = MappingProxyType({
    "sqlite_stmt": "it lists the SQL this connection prepared, and the grader's gold query runs "
                   "on the same connection",
})

SQLITE_LIMITS: Mapping[int, tuple[int, str]] = MappingProxyType({
    sqlite3.SQLITE_LIMIT_ATTACHED: (
        0, "a second wall behind the ATTACH refusal: no file can be attached even if a path "
           "around the authorizer were found"),
    sqlite3.SQLITE_LIMIT_LENGTH: (
        100_000, "the largest value in the 20 databases has 60 bytes; a longer string or blob "
                 "(zeroblob(999999) per row of a recursive CTE) only takes the host's memory"),
})
"""Limit category -> (value, reason), set with sqlite3.Connection.setlimit."""

SQLITE_MAX_DATABASE_BYTES = 64 << 20
"""Cap on the in-memory main and temp databases (the largest converted database has 300 KB):
growth past it fails with ``database or disk is full`` instead of taking the host's memory."""

SQLITE_MAX_STATEMENT_MEMORY = 256 << 20
"""Growth of the process's memory one statement may cause (``watchdog.StatementWatch``): sorts and
temporary b-trees live in memory (``temp_store = MEMORY``), where a sort of a cartesian join would
otherwise grow until the time limit. The 1034 gold queries need a few MB."""

_SETTINGS = (  # applied before the authorizer, which then refuses pragmas that would undo them
    "PRAGMA temp_store = MEMORY",  # temporary tables and indices stay in memory, not in files
    "PRAGMA main.max_page_count = {pages}",
    "PRAGMA temp.max_page_count = {pages}",
)


def sqlite_refusal(action: int, arg1: str | None, arg2: str | None) -> str | None:
    """Why the authorizer refuses this action (``set_authorizer``'s first three arguments), or None."""
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        if name in SQLITE_ALLOWED_PRAGMAS:
            return None
        return (f"PRAGMA {name} is {NOT_ALLOWED}: only the read-only schema listings "
                f"({', '.join(SQLITE_ALLOWED_PRAGMAS)}) are")
    if action == sqlite3.SQLITE_FUNCTION:
        name = (arg2 or "").lower()
        reason = SQLITE_DENIED_FUNCTIONS.get(name)
        return None if reason is None else f"{name}() is {NOT_ALLOWED}: {reason}"
    if action == sqlite3.SQLITE_READ and (arg1 or "").lower() in SQLITE_DENIED_TABLES:
        return f"reading {arg1} is {NOT_ALLOWED}: {SQLITE_DENIED_TABLES[(arg1 or '').lower()]}"
    if action in SQLITE_ALLOWED_ACTIONS:
        return None
    if action in SQLITE_DENIED_ACTIONS:
        what, reason = SQLITE_DENIED_ACTIONS[action]
        return f"{what} is {NOT_ALLOWED}: {reason}"
    return f"this statement (SQLite authorizer action {action}) is {NOT_ALLOWED}"


class SqliteGuard:
    """One connection's authorizer; remembers why it last refused, for the agent's error text."""

    def __init__(self) -> None:
        self.refusal: str | None = None

    def __call__(self, action: int, arg1: str | None, arg2: str | None,
                 database: str | None, source: str | None) -> int:
        reason = sqlite_refusal(action, arg1, arg2)
        if reason is None:
            return sqlite3.SQLITE_OK
        self.refusal = reason
        return sqlite3.SQLITE_DENY


def confine_sqlite(conn: sqlite3.Connection) -> SqliteGuard:
    """Cap an episode's in-memory connection, then install the authorizer; returns it."""
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    for setting in _SETTINGS:
        conn.execute(setting.format(pages=SQLITE_MAX_DATABASE_BYTES // page_size))
    for category, (value, _) in SQLITE_LIMITS.items():
        conn.setlimit(category, value)
    guard = SqliteGuard()
    conn.set_authorizer(guard)
    return guard


# -- MySQL/MariaDB: statements refused before they are sent -------------------------------------

MYSQL_ALLOWED_FIRST_WORDS = frozenset({
    "SELECT", "WITH", "SHOW", "DESC", "DESCRIBE", "EXPLAIN", "INSERT", "UPDATE", "DELETE",
    "REPLACE", "VALUES", "TABLE", "USE", "ROLLBACK", "(",
})
"""Statements that neither commit implicitly nor change the server. Every other one (DDL, COMMIT,
START TRANSACTION, LOCK, SET, LOAD, CREATE USER, GRANT, ...) is refused: MySQL commits the open
transaction *before* it checks privileges, so even a failing DDL would make the episode's rows
permanent; SET PASSWORD needs no privilege at all."""

MYSQL_REFUSED_PHRASES: Mapping[str, tuple[re.Pattern[str], str]] = MappingProxyType({
    "SELECT ... INTO OUTFILE": (
        re.compile(r"\bINTO\s+OUTFILE\b", re.IGNORECASE), "it writes a file on the server's host"),
    "SELECT ... INTO DUMPFILE": (
        re.compile(r"\bINTO\s+DUMPFILE\b", re.IGNORECASE), "it writes a file on the server's host"),
    "LOAD_FILE()": (
        re.compile(r"\bLOAD_FILE\s*\(", re.IGNORECASE), "it reads a file on the server's host"),
    "ROLLBACK ... RELEASE": (
        re.compile(r"^\s*ROLLBACK\b.*\bRELEASE\b", re.IGNORECASE | re.DOTALL),
        "it closes the episode's connection"),
    "GET_LOCK() and the other named-lock functions": (
        re.compile(r"\b(?:GET_LOCK|RELEASE_LOCK|RELEASE_ALL_LOCKS|IS_FREE_LOCK|IS_USED_LOCK)\s*\(", re.IGNORECASE),
        "their names are shared by every session on the server: they would show or hold other episodes' "
        "workspaces"),
})
"""Refused wherever they appear, so the agent reads why; the server refuses the file access too
(no FILE privilege). A string literal holding these words is refused as well: no task needs one."""

_LEADING_COMMENT = re.compile(r"^\s*(?:/\*(?![!M]!?)(?:.|\n)*?\*/|--[^\n]*(?:\n|$)|#[^\n]*(?:\n|$))")
_FIRST_WORD = re.compile(r"^\s*(\(|[A-Za-z]+)")


def mysql_refusal(sql: str) -> str | None:
    """Why a statement is refused before it reaches the server, or None."""
    text = sql
    while match := _LEADING_COMMENT.match(text):
        text = text[match.end():]
    word = _FIRST_WORD.match(text)
    first = word.group(1).upper() if word else text.strip()[:10]
    if first not in MYSQL_ALLOWED_FIRST_WORDS:
        return (f"{first or 'empty'} statements are {NOT_ALLOWED}: only queries and row changes "
                "(SELECT, SHOW, DESC, INSERT, UPDATE, DELETE) can be undone per episode")
    for what, (pattern, reason) in MYSQL_REFUSED_PHRASES.items():
        if pattern.search(text):
            return f"{what} is {NOT_ALLOWED}: {reason}"
    return None
