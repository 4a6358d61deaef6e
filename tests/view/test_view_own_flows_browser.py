"""`statebound view` on one's own work in a real browser (Debian's chromium through Playwright): a
file-defined benchmark's episode with its flow drawn, its typed variables, each pick's prompt and
baseline and the model calls' timings; a thread with its variables and diagram; a search from the
run page to an episode. No console errors, no sideways scroll at 1280 or 390 pixels.

With ``STATEBOUND_VIEW_SCREENSHOTS=DIR`` the pages are also saved there (docs/images/view-*.png)."""

from __future__ import annotations

import pytest
from chromium import needs_chromium
from own_flows import AGENTS, ROOT
from test_view_browser import _open, _overflow, _save
from view_server import serving

pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
pytestmark = needs_chromium
EPISODE = f"run/tickets/episode?task=1&agent={AGENTS[0]}"


@pytest.mark.parametrize("width", (1280, 390))
def test_an_own_flows_episode_shows_its_diagram_vars_prompts_and_call_times(browser, tickets_run, vars_store,
                                                                          tmp_path, width):
    errors: list[str] = []
    with serving(tickets_run, vars_store, cwd=ROOT) as (url, _):
        page = _open(browser, width, errors)
        for path in (EPISODE, "run/tickets", "store/drafts/thread/d1", "search?q=refund"):
            response = page.goto(url + path)
            assert response is not None and response.status == 200, path
            scroll, client = _overflow(page)
            assert scroll <= client, f"{path} at {width} px: {scroll} > {client}"
        page.goto(url + EPISODE)
        page.locator("details.diagram summary").click()
        assert page.locator("figure.diagram svg").is_visible()
        assert page.locator("table.vars th", has_text="team").is_visible()
        prompt = page.locator("details.prompt").first
        prompt.locator("summary").click()
        assert "Support ticket:" in prompt.locator("pre").inner_text()
        page.locator("details.calls summary").click()
        assert page.locator("table.calls tbody tr").count() == 4
        scroll, client = _overflow(page)
        assert scroll <= client, f"the opened episode at {width} px: {scroll} > {client}"
        if width == 1280:
            _save(page, tmp_path, "view-own-episode.png", height=1500)
        page.close()
    assert errors == []


def test_a_threads_variables_and_diagram_show(browser, vars_store, tmp_path):
    errors: list[str] = []
    with serving(vars_store) as (url, _):
        page = _open(browser, 1280, errors)
        page.goto(url + "store/drafts/thread/d1")
        assert page.locator("figure.diagram svg").is_visible()
        assert page.locator("table.vars th", has_text="tone").is_visible()
        assert page.locator("code.var", has_text='tone = "polite"').is_visible()
        _save(page, tmp_path, "view-thread-vars.png", height=1100)
        page.close()
    assert errors == []


def test_a_search_from_the_run_page_leads_to_the_episode(browser, tickets_run, tmp_path):
    errors: list[str] = []
    with serving(tickets_run, cwd=ROOT) as (url, _):
        page = _open(browser, 1280, errors)
        page.goto(url + "run/tickets")
        assert page.locator("small.preview").count() == 2
        page.locator("form.search input[name=q]").fill("Charged")
        page.locator("form.search button").click()
        page.wait_for_load_state()
        assert "q=Charged" in page.url and "run=tickets" in page.url
        assert page.locator("table.hits mark").first.inner_text() == "charged"
        _save(page, tmp_path, "view-search.png", height=500)
        page.locator("table.hits a").first.click()
        page.wait_for_load_state()
        assert "/run/tickets/episode" in page.url and page.locator("h1").inner_text().startswith("Task 1")
        page.close()
    assert errors == []
