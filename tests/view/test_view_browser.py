"""`statebound view` in a real browser: Debian's chromium driven by Playwright (never a downloaded
browser). Pages load without console errors, the grid's filter links work, an episode shows the
SQL as run and the pick scores, a fork from a checkpoint opens the new thread, and no page scrolls
sideways at 1280 or 390 pixels.

Screenshots go to the test's folder; with ``STATEBOUND_VIEW_SCREENSHOTS=DIR`` the grid's and an
episode's are also saved there (how docs/images/view-*.png are made)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from chromium import needs_chromium
from view_server import serving

pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
pytestmark = needs_chromium
WIDTHS = (1280, 390)
EPISODE = "run/run-sql/episode?task=3&agent=stateflow-scoped"
PAGES = ("", "run/run-sql", EPISODE, "compare?run=run-sql&task=3&a=stateflow-scoped&b=gold",
         "store/live", "store/live/thread/t1")


def _open(browser, width: int, errors: list[str]):
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page


def _overflow(page) -> tuple[int, int]:
    return page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")


def _save(page, tmp_path: Path, name: str, height: int = 900) -> None:
    page.screenshot(path=str(tmp_path / name), full_page=True, clip={"x": 0, "y": 0, "width": 1280, "height": height})
    if target := os.environ.get("STATEBOUND_VIEW_SCREENSHOTS"):
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp_path / name, Path(target) / name)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_loads_cleanly_and_never_scrolls_sideways(browser, sql_run, live_store, tmp_path, width):
    errors: list[str] = []
    with serving(sql_run, live_store) as (url, _):
        page = _open(browser, width, errors)
        for path in PAGES:
            response = page.goto(url + path)
            assert response is not None and response.status == 200, path
            scroll, client = _overflow(page)
            assert scroll <= client, f"{path} at {width} px: {scroll} > {client}"
            page.screenshot(path=str(tmp_path / f"{width}-{path.split('?')[0].replace('/', '-') or 'index'}.png"),
                            full_page=True)
        page.close()
    assert errors == []


def test_the_grid_filters_by_link_and_leads_to_the_episode(browser, sql_run, live_store, tmp_path):
    errors: list[str] = []
    with serving(sql_run, live_store) as (url, _):
        page = _open(browser, 1280, errors)
        page.goto(url + "run/run-sql")
        assert page.locator("table.grid td.cell a").count() == 4
        _save(page, tmp_path, "view-grid.png")
        page.locator(".chips a", has_text="gold").first.click()
        page.wait_for_load_state()
        assert "agent=gold" in page.url
        cells = page.locator("table.grid td.cell a")
        assert cells.count() == 2
        assert all("agent=gold" in (cells.nth(i).get_attribute("href") or "") for i in range(2))
        page.goto(url + "run/run-sql")
        page.locator('table.grid td.cell a[href*="agent=stateflow-scoped"][href*="task=3"]').click()
        page.wait_for_load_state()
        assert page.locator(".step .action code", has_text="execute[SELECT").count() >= 1
        assert page.locator("table.choice tr.picked").count() >= 1
        scores = page.locator("table.choice td.num").all_inner_texts()
        assert scores and all(text == "-inf" or float(text) <= 0 for text in scores)  # log-probabilities
        _save(page, tmp_path, "view-episode.png", height=1700)
        page.close()
    assert errors == []


def test_a_thread_shows_its_pending_question_and_checkpoints(browser, sql_run, live_store, tmp_path):
    errors: list[str] = []
    with serving(sql_run, live_store) as (url, _):
        page = _open(browser, 1280, errors)
        page.goto(url)
        page.locator("a", has_text="live").first.click()
        page.locator("a", has_text="t1").first.click()
        page.wait_for_load_state()
        assert page.locator("pre.pending").inner_text().startswith("Send draft <script>")  # shown as text
        assert page.locator("table tbody tr").count() >= 3
        page.locator("details summary").first.click()  # a checkpoint's added entry opens
        _save(page, tmp_path, "view-thread.png", height=800)
        page.close()
    assert errors == []


def test_a_fork_from_a_checkpoint_opens_the_new_thread(browser, sql_run, live_store, tmp_path):
    errors: list[str] = []
    with serving(sql_run, live_store) as (url, _):
        page = _open(browser, 1280, errors)
        page.goto(url + "store/live/thread/t1")
        form = page.locator("form.fork")
        form.locator("input[name=seq]").fill("1")
        form.locator("input[name=edit_index]").fill("1")
        form.locator("textarea[name=edit_text]").fill("a rewritten draft")
        form.locator("button[type=submit]").click()
        page.wait_for_load_state()
        assert page.url.endswith("/store/live/thread/t1-at-1")
        assert page.locator("text=forked from").count() >= 1
        page.goto(url + "store/live")
        assert page.locator("table tbody tr").count() == 2
        page.close()
    assert errors == []


def test_a_run_being_written_shows_new_episodes_as_they_land(browser, tmp_path):
    from statebound.bench.models import ModelSpec
    from statebound.bench.plan import RunConfig
    from statebound.bench.store import RunStore
    from statebound.contract.result import EpisodeResult

    run = tmp_path / "growing"
    config = RunConfig(benchmark="toy", agents=("a",), models=(ModelSpec("m"),), task_ids=("t1", "t2", "t3"))
    errors: list[str] = []
    with RunStore(run) as writer:
        writer.start(config, resume=False)
        writer.save(EpisodeResult(task="t1", agent="a", model="m", success=True), benchmark="toy", position=0)
        with serving(run) as (url, _):
            page = _open(browser, 1280, errors)
            page.goto(url + "run/growing")
            assert "1 of 3 episodes" in page.locator("#episodes").inner_text()
            writer.save(EpisodeResult(task="t2", agent="a", model="m"), benchmark="toy", position=1)
            page.locator("#episodes", has_text="2 of 3 episodes").wait_for(timeout=15_000)  # no reload
            assert page.locator("table.grid td.cell a").count() == 2
            page.close()
    assert errors == []
