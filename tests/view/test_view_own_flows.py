"""`statebound view` on one's own work (Starlette's TestClient, real stores): a benchmark and agents
defined in a file drawn as their flow, typed variables, each pick's prompt, baseline and scores,
per-call timings, task previews, live-flow stores found inside folders, and a search over the
episodes' text."""

from __future__ import annotations

import html
import re

import pytest
from markupsafe import escape
from own_flows import AGENTS, ROOT
from test_view_app import _episode, client

from statebound.contract.result import CALLS_KEY, VARS_KEY
from statebound.view.sources import find_sources

SCOPED = AGENTS[0]


def test_a_file_benchmarks_episode_shows_its_flow_vars_pick_prompts_and_call_times(tickets_run, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)  # where the run was made: the file's relative path resolves here
    result = _episode(tickets_run, "1", SCOPED)
    page = client(tickets_run).get("/run/tickets/episode", params={"task": "1", "agent": SCOPED}).text
    assert "<svg" in page and "flow diagram" in page  # the machine in docs/examples/tickets.py, drawn
    assert result.meta[VARS_KEY] == {"team": result.meta[VARS_KEY]["team"], "priority": result.meta[VARS_KEY]["priority"]}
    for name, value in result.meta[VARS_KEY].items():
        assert f"<tr><th>{name}</th><td><code>{escape(repr(value).replace(chr(39), chr(34)))}</code></td></tr>" in page
    choices = [item["choice"] for item in result.trajectory if isinstance(item.get("choice"), dict)]
    assert [c["name"] for c in choices] == ["team", "priority"]
    for choice in choices:
        assert "Support ticket:" in choice["prompt"] and "N/A" in choice["baseline"]
        assert f"<pre>{escape(choice['prompt'])}</pre>" in page and f"<pre>{escape(choice['baseline'])}</pre>" in page
    calls = result.meta[CALLS_KEY]
    assert [call["state"] for call in calls] == ["Team", "Team", "Priority", "Priority"]  # prompt and baseline each
    assert all(call["seconds"] is not None and call["seconds"] >= 0 for call in calls)
    assert "4 model calls" in page and page.count("2 model calls") == 2  # the list, and each visit's
    for call in calls:
        assert f'<td class="num">{call["seconds"]:.3f}</td>' in page


def test_the_diagram_comes_from_the_store_from_any_directory_and_no_file_is_run(tickets_run, tmp_path,
                                                                              monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # the store names docs/examples/tickets.py, which is not here
    page = client(tickets_run).get("/run/tickets/episode", params={"task": "1", "agent": SCOPED})
    assert page.status_code == 200 and "<svg" in page.text and "Flow variables" in page.text


def test_the_grid_previews_each_task_text(tickets_run, monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    page = client(tickets_run).get("/run/tickets").text
    previews = re.findall(r'<small class="preview">([^<]*)</small>', page)
    assert len(previews) == 2 and all(previews)
    assert html.unescape(previews[0]) in _episode(tickets_run, "1", SCOPED).trajectory[0]["content"]


def test_a_thread_shows_its_variables_what_each_checkpoint_wrote_its_diagram_and_step_times(vars_store) -> None:
    page = client(vars_store).get("/store/drafts/thread/d1").text
    assert 'id="vars">Flow variables' in page
    assert "<tr><th>tone</th><td><code>&#34;polite&#34;</code></td></tr>" in page
    assert "<tr><th>sent</th><td><code>true</code></td></tr>" in page
    assert '<code class="var">tone = &#34;polite&#34;</code>' in page  # the checkpoint that wrote it
    assert '<code class="var">sent = true</code>' in page
    assert "<svg" in page and "Tone" in page and "Send" in page
    took = re.findall(r'<td class="num">(\d+\.\d\d) s</td>', page)
    assert took and all(float(seconds) >= 0 for seconds in took)
    assert "stored by</strong>: the thread that stored" in page  # the column says what it means


def test_live_flow_stores_inside_a_folder_are_found_and_nothing_else(folder_of_work) -> None:
    sources = find_sources([folder_of_work])
    assert list(sources.runs) == ["run-html"]
    assert sources.stores == {"flows-week1-drafts": folder_of_work / "flows" / "week1" / "drafts.sqlite"}
    page = client(folder_of_work).get("/store/flows-week1-drafts/thread/d1")
    assert page.status_code == 200 and "drafting" in page.text


def test_a_search_finds_the_episodes_whose_text_holds_it(tickets_run, hostile_run) -> None:
    web = client(tickets_run, hostile_run)
    found = web.get("/search", params={"q": "CHARGED TWICE"}).text  # letters in either case
    ticket = _episode(tickets_run, "1", SCOPED).trajectory[0]["content"]
    assert "charged twice" in ticket
    links = [html.unescape(link) for link in re.findall(r'<td><a href="([^"]+)">', found)]
    assert len(links) == 2 and all(web.get(link).status_code == 200 for link in links)  # both agents of task 1
    assert "<mark>charged twice</mark>" in found and "2 episodes whose text holds" in found
    only = web.get("/search", params={"q": "<script>", "run": "run-html"}).text
    assert "<mark>&lt;script&gt;</mark>" in only and "<script>" not in only
    assert "1 episode whose text holds" not in only and "2 episodes whose text holds" in only
    none = web.get("/search", params={"q": "no such words anywhere"}).text
    assert "0 episodes whose text holds" in none


@pytest.mark.parametrize(("params", "status", "said"), [
    ({"q": ""}, 400, "give some text to search for"),
    ({"q": "   "}, 400, "give some text to search for"),
    ({"q": "x" * 201}, 400, "the search text has 201 characters; give at most 200"),
    ({"q": "refund", "run": "nope"}, 404, "no run &#39;nope&#39; here"),
])
def test_a_search_that_cannot_run_says_why(tickets_run, params, status, said) -> None:
    page = client(tickets_run).get("/search", params=params)
    assert page.status_code == status and said in page.text
