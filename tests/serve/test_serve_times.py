"""The server's times on PostgreSQL keep fractions of a second: a lease of one second is one second.
(Its tables once held them as REAL, PostgreSQL's four-byte float: a time to within 128 seconds.)"""

from __future__ import annotations

import time

import psycopg

from statebound.serve.db import RunRow, ServerDB


def _run(now: float, lease_until: float) -> RunRow:
    return RunRow("run-1", "thread-1", "steps", "running", now, now, {}, {}, "reject", "w", lease_until, -1, None, None)


def test_a_lease_of_a_second_is_stored_to_the_millisecond(postgres_url):
    db = ServerDB(postgres_url)
    try:
        now = time.time()
        db.insert_run(_run(now, now + 1.0))
        stored = db.run("run-1")
    finally:
        db.close()
    assert stored is not None
    assert abs(stored.lease_until - (now + 1.0)) < 0.001 and abs(stored.created - now) < 0.001


def test_tables_made_with_four_byte_times_are_widened(postgres_url):
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute("CREATE TABLE statebound_server_threads (thread TEXT PRIMARY KEY, metadata TEXT NOT NULL, "
                      "created REAL NOT NULL, updated REAL NOT NULL)")
        admin.execute("CREATE TABLE statebound_runs (run_id TEXT PRIMARY KEY, thread TEXT NOT NULL, assistant TEXT NOT NULL, "
                      "status TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL, metadata TEXT NOT NULL, "
                      "request TEXT NOT NULL, multitask TEXT NOT NULL, worker TEXT, lease_until REAL NOT NULL, "
                      "start_seq INTEGER NOT NULL, cancel TEXT, error TEXT)")
    ServerDB(postgres_url).close()
    with psycopg.connect(postgres_url) as db:
        types = dict(db.execute("SELECT table_name || '.' || column_name, data_type FROM information_schema.columns "
                                "WHERE table_name IN ('statebound_runs', 'statebound_server_threads') "
                                "AND column_name IN ('created', 'updated', 'lease_until')").fetchall())
    assert types == {f"{table}.{column}": "double precision" for table, column in
                     [("statebound_runs", "created"), ("statebound_runs", "updated"), ("statebound_runs", "lease_until"),
                      ("statebound_server_threads", "created"), ("statebound_server_threads", "updated")]}
