"""MariaDB episodes running at once stay apart (issue #51): each leases a workspace of its own, so
it cannot see another's sessions (an episode read another's running SQL from PROCESSLIST) nor
block its tables (an uncommitted UPDATE made another's fail with a lock timeout); a statement over
the packet limit is refused before it is sent, and the session goes on (it dropped the session,
and every later query got an empty error). Over the real server of ``scripts/mariadb.sh``."""

from __future__ import annotations

import threading
import time

import pytest

from statebound.envs.sql import SqlEnvironment, load_tasks
from statebound.envs.sql.mysql_backend import MySqlBackend, MySqlConfig
from statebound.envs.sql.workspaces import lease_workspace
from statebound.errors import EnvironmentUnavailable

pytestmark = pytest.mark.integration

NETWORK_TASK = next(t.id for t in load_tasks() if t.db == "network_1")


def _env(backend: MySqlBackend) -> SqlEnvironment:
    env = SqlEnvironment(backend=backend)
    env.reset(NETWORK_TASK)
    return env


def test_an_episode_sees_no_other_session(mysql_backend: MySqlBackend) -> None:
    sleeper, watcher = _env(mysql_backend), _env(mysql_backend)
    try:
        running = threading.Thread(target=sleeper.step, args=("execute[SELECT SLEEP(3) AS other_episodes_query]",))
        running.start()
        time.sleep(0.5)
        for query in ("SELECT user, db, info FROM information_schema.PROCESSLIST", "SHOW FULL PROCESSLIST"):
            seen = watcher.step(f"execute[{query}]")
            assert seen.ok, seen.observation
            assert "other_episodes_query" not in seen.observation and "SLEEP" not in seen.observation
        locks = watcher.step("execute[SELECT IS_USED_LOCK('statebound.workspace.1')]")
        assert not locks.ok and "named-lock functions is not allowed" in locks.observation
        running.join()
    finally:
        sleeper.close()
        watcher.close()


def test_an_episode_does_not_block_anothers_tables(mysql_backend: MySqlBackend) -> None:
    first, second = _env(mysql_backend), _env(mysql_backend)
    try:
        assert first.step("execute[UPDATE highschooler SET name = 'changed']").ok  # uncommitted, locks every row
        started = time.monotonic()
        updated = second.step("execute[UPDATE highschooler SET grade = grade + 1]")
        assert updated.ok and time.monotonic() - started < 2, updated.observation  # no lock wait
        assert second.step("execute[SELECT count(*) FROM highschooler WHERE name = 'changed']").observation == "[(0,)]"
        missing = second.step("execute[SELECT * FROM nosuch]")
        assert "Table 'network_1.nosuch' doesn't exist" in missing.observation  # named as upstream names it
    finally:
        first.close()
        second.close()
    again = _env(mysql_backend)  # every workspace is as the dump made it again
    try:
        assert again.step("execute[SELECT count(*) FROM highschooler WHERE name = 'changed']").observation == "[(0,)]"
    finally:
        again.close()


def test_a_statement_past_the_packet_limit_is_not_sent_and_the_session_goes_on(mysql_backend: MySqlBackend) -> None:
    env = _env(mysql_backend)
    try:
        huge = env.step(f"execute[SELECT '{'x' * (17 << 20)}']")
        assert not huge.ok and "more than the server takes in one packet" in huge.observation
        assert env.step("execute[SELECT count(*) FROM friend]").observation == "[(20,)]"
    finally:
        env.close()


def test_a_lease_waits_for_a_free_workspace_and_says_when_none_frees(mysql_backend: MySqlBackend) -> None:
    connect = lambda: mysql_backend._connect(None)  # noqa: E731 - the backend's own account
    held = [lease_workspace(connect, 2, wait_s=1) for _ in range(2)]
    try:
        assert sorted(workspace.number for workspace in held) == [1, 2]
        with pytest.raises(EnvironmentUnavailable, match="every one of the 2 MariaDB workspaces has been in use"):
            lease_workspace(connect, 2, wait_s=0.3, poll_s=0.1)
        held.pop().release()
        assert lease_workspace(connect, 2, wait_s=1).number in (1, 2)
    finally:
        for workspace in held:
            workspace.release()


def test_a_server_without_the_workspaces_is_named(mysql_backend: MySqlBackend) -> None:
    config = mysql_backend.config
    with pytest.raises(EnvironmentUnavailable, match="has no episode workspace 999 .*scripts/mariadb.sh start"):
        MySqlBackend(config=MySqlConfig(host=config.host, port=config.port, user=config.user,
                                        password=config.password, workspaces=999))
