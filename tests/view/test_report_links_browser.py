"""report.html beside `statebound view`, in Debian's chromium through Playwright: the tasks x agents
grid links every episode to its page in a real viewer started on the same run, and at 390 pixels
the page does not scroll sideways while the plots keep a legible size (scrolling in their box)."""

from __future__ import annotations

from pathlib import Path

import pytest
from chromium import needs_chromium
from view_server import serving

from statebound.report.finish import finish_run

pytest.importorskip("playwright.sync_api", reason="pip install playwright (the dev extra)")
pytestmark = needs_chromium
# the smallest text of any plot, in CSS pixels as drawn: matplotlib's x-small labels included
SMALLEST_TEXT = """() => Math.min(...[...document.querySelectorAll("figure svg")].flatMap((svg) => {
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return [...svg.querySelectorAll("text")].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale);
}))"""


def test_each_grid_mark_opens_its_episode_in_the_viewer(browser, sql_run: Path, tmp_path: Path) -> None:
    with serving(sql_run) as (url, _):
        finish_run([sql_run], out_dir=tmp_path, plots=False, view_url=url)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto((tmp_path / "report.html").as_uri())
        marks = page.locator("table.tasks td a")
        assert marks.count() == 4  # 2 tasks x 2 agents, one seed
        assert page.locator("table.tasks a.solved").count() >= 2  # the gold oracle solves both
        link = page.locator('table.tasks a[href*="agent=stateflow-scoped"][href*="task=3"]')
        assert link.get_attribute("href").startswith(f"{url}run/run-sql/episode?task=3")
        link.click()
        page.wait_for_load_state()
        assert page.url.startswith(url) and page.locator(".step .action code", has_text="execute[SELECT").count() >= 1
        page.close()


def test_at_390_pixels_the_page_stays_put_and_plot_text_stays_legible(browser, sql_run: Path, tmp_path: Path) -> None:
    finish_run([sql_run], out_dir=tmp_path)
    sizes = {}
    for width in (1280, 390):
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto((tmp_path / "report.html").as_uri())
        scroll, client = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert scroll <= client, f"{width} px: the page scrolls sideways ({scroll} > {client})"
        assert page.locator("figure svg").count() >= 2
        sizes[width] = page.evaluate(SMALLEST_TEXT)
        page.close()
    assert sizes[390] >= 8.5 and sizes[1280] >= 8.5, sizes
