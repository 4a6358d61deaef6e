"""Hostile result sets stay bounded on both backends: the episode reads a cut (or a refusal) and goes on.

Each query would otherwise pile up gigabytes in the evaluating process (issue #38: a recursive CTE
of ~1 MB rows reached 6.9 GB, a 9-way cartesian join 1.35 GB) and a 28-million-character
observation. ``benchmarks/sql_result_bounds.py`` measures the process's peak memory for them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from statebound.envs.sql import ERROR_PREFIX, Backend, SqlEnvironment, load_tasks
from statebound.envs.sql.budget import ResultBudget, fetch_within
from statebound.envs.sql.mysql_backend import MySqlBackend
from statebound.envs.sql.sqlite_backend import SqliteBackend
from statebound.envs.sql.watchdog import StatementWatch, resident_bytes

NETWORK_TASK = next(t for t in load_tasks() if t.db == "network_1")
LIKES = "execute[SELECT count(*) FROM likes]"  # 10 rows in every fresh copy
BOUND = 64 << 10  # the default result budget in bytes; observations stay near it
CARTESIAN = "SELECT * FROM " + ", ".join(f"highschooler t{i}" for i in range(9))
RECURSIVE = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT {big} FROM c"


def _env(backend: Backend, timeout_s: float) -> Iterator[SqlEnvironment]:
    env = SqlEnvironment(backend=backend, max_turns=None, timeout_s=timeout_s)
    env.reset(NETWORK_TASK.id)
    yield env
    env.close()


@pytest.fixture
def sqlite_env(sqlite_backend: SqliteBackend) -> Iterator[SqlEnvironment]:
    yield from _env(sqlite_backend, timeout_s=2)


@pytest.fixture
def mysql_env(mysql_backend: MySqlBackend) -> Iterator[SqlEnvironment]:
    yield from _env(mysql_backend, timeout_s=2)


def _cut(env: SqlEnvironment, sql: str) -> str:
    """Run ``sql``; it must succeed with a cut result, a bounded observation, and the episode go on."""
    step = env.step(f"execute[{sql}]")
    assert step.ok, step.observation[:300]
    assert "result cut at" in step.observation and "further rows were not fetched" in step.observation
    assert step.info["cut"] in step.observation
    assert len(step.observation) < BOUND + 200
    assert env.step(LIKES).observation == "[(10,)]"
    return step.observation


def test_fetching_stops_when_the_byte_budget_is_spent() -> None:
    pulled: list[int] = []

    def rows() -> Iterator[tuple[str]]:
        for i in range(10**9):
            pulled.append(i)
            yield ("x" * 100,)

    kept = fetch_within(rows(), ResultBudget(max_bytes=1_000))
    assert len(kept) == 9 and len(str(kept)) <= 1_000 and len(pulled) == 10
    assert kept.cut is not None and "result cut at" in kept.cut and "9 rows" in kept.cut


def test_fetching_stops_at_the_row_limit() -> None:
    kept = fetch_within(iter([(1,)] * 50), ResultBudget(max_rows=20))
    assert kept == [(1,)] * 20 and kept.cut is not None and "20 rows (the row limit)" in kept.cut
    whole = fetch_within(iter([(1,)] * 20), ResultBudget(max_rows=20))
    assert whole == [(1,)] * 20 and whole.cut is None


def test_sqlite_recursive_cte_of_huge_values_fails_fast(sqlite_env: SqlEnvironment) -> None:
    step = sqlite_env.step(f"execute[{RECURSIVE.format(big='zeroblob(999999)')}]")
    assert not step.ok and step.observation == ERROR_PREFIX + "string or blob too big"
    assert sqlite_env.step(LIKES).observation == "[(10,)]"


def test_sqlite_wide_rows_are_cut_by_bytes(sqlite_env: SqlEnvironment) -> None:
    observation = _cut(sqlite_env, "SELECT zeroblob(5000) FROM highschooler")
    assert "after 3 rows" in observation


def test_sqlite_recursive_cte_of_wide_rows_is_cut(sqlite_env: SqlEnvironment) -> None:
    _cut(sqlite_env, RECURSIVE.format(big="zeroblob(99999)"))


def test_sqlite_cartesian_join_is_cut(sqlite_env: SqlEnvironment) -> None:
    _cut(sqlite_env, CARTESIAN)


def test_the_watch_stops_a_statement_whose_memory_grows_past_its_budget() -> None:
    if resident_bytes() is None:
        pytest.skip("no /proc/self/statm here")
    watch = StatementWatch(timeout_s=3600, memory_bytes=8 << 20)
    assert not any(watch() for _ in range(8))
    held = b"x" * (64 << 20)  # written, so resident
    assert any(watch() for _ in range(8)) and watch.stopped_by == "memory"
    assert "more than 8 MB of memory" in watch.message()
    del held


def test_sqlite_sorting_a_cartesian_join_is_stopped_by_the_memory_limit(sqlite_backend: SqliteBackend) -> None:
    # a time limit far beyond what the sort takes to reach 256 MB (about a second), so that memory
    # stops it even on a loaded machine (with the 2 s limit, time stopped it once under load)
    for env in _env(sqlite_backend, timeout_s=120):
        step = env.step(f"execute[{CARTESIAN} ORDER BY random()]")
        assert not step.ok
        assert step.observation == ERROR_PREFIX + (
            "Query execution was interrupted: it took more than 256 MB of memory (the statement memory "
            "limit); sort or join fewer rows")
        assert env.step(LIKES).observation == "[(10,)]"


def test_a_cut_result_is_scored_as_fetched(sqlite_env: SqlEnvironment) -> None:
    _cut(sqlite_env, CARTESIAN)
    sqlite_env.step(f"execute[{CARTESIAN}]")
    final = sqlite_env.step("submit")
    assert final.done and "result cut at" not in final.observation  # the rows, bounded as shown
    assert sqlite_env.score().reward == 0


def test_every_sql_observation_is_bounded_in_characters(sqlite_backend: SqliteBackend) -> None:
    env = SqlEnvironment(backend=sqlite_backend, max_turns=None, max_observation_chars=100)
    env.reset(NETWORK_TASK.id)
    step = env.step("execute[SELECT * FROM highschooler]")
    assert step.observation.startswith(str(env.step("execute[SELECT * FROM highschooler]")
                                           .observation[:100]))
    assert len(step.observation) < 200 and "[observation cut:" in step.observation
    env.close()


@pytest.mark.integration
def test_mysql_recursive_cte_of_huge_values_is_bounded(mysql_env: SqlEnvironment) -> None:
    query = RECURSIVE.format(big="REPEAT('x', 999999)")
    step = mysql_env.step(f"execute[{query}]")
    assert len(step.observation) < BOUND + 200  # a cut result or the time limit, never the rows
    assert step.ok == ("result cut at" in step.observation), step.observation[:300]
    assert mysql_env.step(LIKES).observation == "[(10,)]"


@pytest.mark.integration
def test_mysql_wide_rows_are_cut_by_bytes(mysql_env: SqlEnvironment) -> None:
    assert "after 0 rows" in _cut(mysql_env, "SELECT REPEAT('x', 999999) FROM highschooler")


@pytest.mark.integration
def test_mysql_cartesian_join_is_cut(mysql_env: SqlEnvironment) -> None:
    _cut(mysql_env, CARTESIAN)


@pytest.mark.integration
def test_mysql_statement_cut_by_the_time_limit_is_not_a_result(mysql_env: SqlEnvironment) -> None:
    step = mysql_env.step("execute[SELECT BENCHMARK(100000000000, MD5('x'))]")
    assert not step.ok and step.observation.startswith(ERROR_PREFIX), step.observation
    assert "max_statement_time" in step.observation
    assert mysql_env.step(LIKES).observation == "[(10,)]"
