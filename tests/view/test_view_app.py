"""`statebound view`'s pages through Starlette's TestClient, over real stores: a SQL run on SQLite,
a run whose texts hold HTML, a live-flow store with a paused thread."""

from __future__ import annotations

import html
import re
import sqlite3
from pathlib import Path

import pytest
from markupsafe import escape
from starlette.testclient import TestClient
from typer.testing import CliRunner
from view_stores import HOSTILE, hostile_result

from statebound.bench.store import RunStore
from statebound.cli.app import app
from statebound.flow.live import SQLiteCheckpointer
from statebound.flow.live.fold import fold
from statebound.view.app import build_app
from statebound.view.sources import find_sources


def client(*paths: Path) -> TestClient:
    return TestClient(build_app(find_sources(paths)))


def _episode(run: Path, task: str, agent: str):
    with RunStore(run, read_only=True) as store:
        (found,) = store.episodes(task=task, agent=agent)
    return found


def _grid_links(page: str) -> list[str]:
    return [html.unescape(href) for href in re.findall(r'<td class="cell"><a class="\w+" href="([^"]+)"', page)]


def test_index_lists_runs_and_stores_with_links(sql_run: Path, live_store: Path) -> None:
    page = client(sql_run, live_store).get("/")
    assert page.status_code == 200
    assert 'href="/run/run-sql"' in page.text and 'href="/store/live"' in page.text
    assert "intercode-sql" in page.text


def test_the_grid_links_every_episode_and_filters_by_agent_and_outcome(sql_run: Path) -> None:
    web = client(sql_run)
    page = web.get("/run/run-sql").text
    links = _grid_links(page)
    assert len(links) == 4  # 2 tasks x 2 agents
    assert all(web.get(link).status_code == 200 for link in links)
    assert "Results" in page and "SR %" in page  # the report's table
    only_gold = _grid_links(web.get("/run/run-sql", params={"agent": "gold"}).text)
    assert len(only_gold) == 2 and all("agent=gold" in link for link in only_gold)
    failed = web.get("/run/run-sql", params={"outcome": "failed"}).text  # the gold oracle solves both
    solved_by_machine = {r.task for r in (_episode(sql_run, t, "stateflow-scoped") for t in ("3", "0")) if r.success}
    assert len(_grid_links(failed)) == 2 * (2 - len(solved_by_machine))
    assert 'class="on">✗ failed' in failed  # the filter in force is marked
    assert "informative" in page  # task 3's result is not empty: doing nothing does not solve it


def test_an_episode_shows_the_sql_as_run_the_pick_scores_and_gold_vs_obtained(sql_run: Path) -> None:
    result = _episode(sql_run, "3", "stateflow-scoped")
    page = client(sql_run).get("/run/run-sql/episode", params={"task": "3", "agent": "stateflow-scoped"}).text
    actions = [e["data"]["action"] for e in result.events
               if e.get("kind") == "message_added" and "action" in (e.get("data") or {})]
    assert any(a.startswith("execute[SELECT") for a in actions)
    for action in actions:
        assert f"ran <code>{escape(action)}</code>" in page
    choices = [item["choice"] for item in result.trajectory if isinstance(item.get("choice"), dict)]
    assert choices and all(c["scores"] is not None for c in choices)
    for choice in choices:
        for candidate, score in zip(choice["candidates"], choice["scores"]):
            shown = "-inf" if score is None else f"{score:.3f}"
            assert f"<td>{escape(candidate)}</td><td class=\"num\">{shown}</td>" in page
    assert "SELECT count(DISTINCT Nationality) FROM conductor" in page and "[(3,)]" in page  # gold, expected
    assert "<dt>obtained</dt>" in page and "<dt>reward</dt>" in page
    assert "<details><summary>task" in page  # the prompt is collapsed
    assert "states entered:" in page and "Run <b>×1</b>" in page


def test_two_agents_side_by_side(sql_run: Path) -> None:
    page = client(sql_run).get("/compare", params={"run": "run-sql", "task": "3", "a": "stateflow-scoped",
                                                   "b": "gold"})
    assert page.status_code == 200
    assert page.text.count('<article class="side">') == 2
    assert "execute[SELECT count(DISTINCT Nationality) FROM conductor]" in page.text  # the gold's action


def test_html_in_every_text_is_escaped(hostile_run: Path, live_store: Path) -> None:
    web = client(hostile_run, live_store)
    pages = [web.get(url) for url in (
        "/", "/run/run-html", "/run/run-html?agent=a%3Cb%3E",
        "/run/run-html/episode?task=t%3C1%3E&agent=a%3Cb%3E",
        "/compare?run=run-html&task=t%3C1%3E&a=a%3Cb%3E&b=b",
        "/store/live", "/store/live/thread/t1")]
    for page in pages:
        assert page.status_code == 200, page.url
        assert "<script>" not in page.text and "<b>" not in page.text.replace("<b>×", ""), page.url
    episode = pages[3].text
    escaped = str(escape(HOSTILE))  # as Jinja escapes it
    for planted in (f"task text {escaped}", f"reply {escaped}", f"Observation: {escaped}",
                    f"execute[{escaped}]", f"answer {escaped}", f"<td>{escaped}</td>"):
        assert planted in episode
    assert f"Send draft {escaped}?" in pages[-1].text  # the pending question


def test_a_thread_shows_its_checkpoints_and_pending_question(live_store: Path) -> None:
    web = client(live_store)
    listing = web.get("/store/live").text
    assert 'href="/store/live/thread/t1"' in listing and "paused" in listing
    page = web.get("/store/live/thread/t1").text
    assert "Pending question" in page and "statebound threads" in page
    with sqlite3.connect(live_store) as db:
        count = db.execute("SELECT count(*) FROM checkpoints WHERE thread = 't1'").fetchone()[0]
    assert page.count('<tr><td class="num">') == count


def test_new_episodes_show_on_reload_while_the_writer_keeps_writing(tmp_path: Path, hostile_run: Path) -> None:
    web = client(hostile_run)
    assert len(_grid_links(web.get("/run/run-html").text)) == 2
    with RunStore(hostile_run) as writer:  # a run going on: the viewer reads between its writes
        writer.save(hostile_result("t2", "b", success=True), benchmark="hand", position=2)
        assert len(_grid_links(web.get("/run/run-html").text)) == 3
        writer.save(hostile_result("t3", "b", success=True), benchmark="hand", position=3)  # not locked out
    assert len(_grid_links(web.get("/run/run-html").text)) == 4


def test_unknown_pages_are_404_with_a_sentence(sql_run: Path) -> None:
    web = client(sql_run)
    assert web.get("/run/nope").status_code == 404
    missing = web.get("/run/run-sql/episode", params={"task": "999", "agent": "gold"})
    assert missing.status_code == 404 and "no episode of task &#39;999&#39;" in missing.text


@pytest.mark.parametrize(("make", "said"), [
    (lambda tmp: tmp / "absent", "does not exist"),
    (lambda tmp: (tmp / "empty").mkdir() or tmp / "empty", "holds no run (run.sqlite) and no live-flow store"),
    (lambda tmp: (tmp / "notes.txt").write_text("hi") and tmp / "notes.txt", "neither a run store nor a live-flow store"),
])
def test_a_path_that_is_neither_a_run_nor_a_store_is_one_line(tmp_path: Path, make, said: str) -> None:
    path = make(tmp_path)
    result = CliRunner().invoke(app, ["view", str(path)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and said in lines[0]


def test_a_folder_of_runs_serves_each_run_below_it(sql_run: Path, hostile_run: Path) -> None:
    sources = find_sources([sql_run.parent])
    assert list(sources.runs) == ["run-sql"]


def test_a_fork_from_a_checkpoint_makes_a_thread_with_the_edit(live_store: Path) -> None:
    web = client(live_store)
    made = web.post("/store/live/fork/t1", data={"seq": "1", "edit_index": "1", "edit_text": "draft <i>2</i>",
                                                 "name": ""}, follow_redirects=False)
    assert made.status_code == 303 and made.headers["location"] == "/store/live/thread/t1-at-1"
    page = web.get(made.headers["location"]).text
    assert 'forked from <a href="/store/live/thread/t1">t1</a> at checkpoint 1' in page
    assert "#1 rewritten</summary><pre>draft &lt;i&gt;2&lt;/i&gt;</pre>" in page  # the edited entry, escaped
    with SQLiteCheckpointer(live_store, read_only=True) as store:
        (fork,) = [info for info in store.threads() if info.thread == "t1-at-1"]
        assert fork.parent == "t1"
        assert fold(store.lineage("t1-at-1"), "").stored.history[1].content == "draft <i>2</i>"


def test_a_fork_that_cannot_be_made_says_why_and_one_from_another_site_is_refused(live_store: Path) -> None:
    web = client(live_store)
    beyond = web.post("/store/live/fork/t1", data={"seq": "99"})
    assert beyond.status_code == 400 and "has no checkpoint 99" in beyond.text
    foreign = web.post("/store/live/fork/t1", data={"seq": "1"}, headers={"Origin": "http://elsewhere.example"})
    assert foreign.status_code == 403
    with SQLiteCheckpointer(live_store, read_only=True) as store:
        assert [info.thread for info in store.threads()] == ["t1"]
