"""report.html in a real browser (headless Chromium, Debian's ``chromium``) at 1280 pixels: the page
never scrolls sideways, and every plot is drawn, titled, captioned and shows every agent."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.store import RunStore
from statebound.contract.result import EpisodeResult
from statebound.contract.trace import TraceEntry
from statebound.llm.base import Usage
from statebound.report.finish import finish_run

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no chromium: scripts/setup.sh installs it (apt-get install chromium) for the report.html screenshot test",
)
WIDTH = 1280
AGENTS = ("stateflow-no-verify", "react-refined", "plan-solve")  # the same scores: points that would overlap
MODEL = "function:statebound.benchmarks.toy:a_model_with_a_long_name"
# matplotlib's first three colours: one per agent in every plot
COLOURS = {"stateflow-no-verify": (0x1F, 0x77, 0xB4), "react-refined": (0xFF, 0x7F, 0x0E), "plan-solve": (0x2C, 0xA0, 0x2C)}
PROBE = """<script>window.addEventListener("load", () => {
  const figures = [...document.querySelectorAll("figure")].map((figure) => {
    const box = figure.querySelector("svg").getBoundingClientRect();
    return {id: figure.id, x: box.left + scrollX, y: box.top + scrollY, width: box.width, height: box.height,
            caption: figure.querySelector("figcaption").textContent};
  });
  const root = document.documentElement;
  document.title = JSON.stringify({scrollWidth: root.scrollWidth, clientWidth: root.clientWidth,
                                   height: root.scrollHeight, figures});
});</script>"""


def _trajectory(agent: str, task: int) -> list[dict]:
    states = ("Plan", "Act") if agent == "plan-solve" else ("Solve", "Observe", "Verify")
    return [TraceEntry(state=state, role="assistant", content=f"{state} {task}", usage=Usage(100 + task, 10, 1)).to_dict()
            for state in states]


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    run = tmp_path_factory.mktemp("browser") / "a-run-directory-with-a-rather-long-name-20250101-120000"
    tasks = [f"task-{i}" for i in range(8)]
    config = RunConfig(benchmark="hand", agents=AGENTS, models=(ModelSpec(MODEL),), task_ids=tuple(tasks))
    with RunStore(run) as store:
        store.start(config, resume=False)
        position = 0
        for agent in AGENTS:
            for i, task in enumerate(tasks):
                store.save(EpisodeResult(
                    task=task, agent=agent, model=MODEL, success=i % 2 == 0, reward=float(i % 2 == 0),
                    turns=3 + i % 2, prompt_tokens=1000 + 10 * i, completion_tokens=40,
                    meta={"hardness": ("easy", "medium", "hard", "extra")[i % 4]},
                    trajectory=_trajectory(agent, i)), benchmark="hand", position=position)
                position += 1
    finish_run([run], out_dir=run, bin_width=2)
    return run


def _chromium(*args: str, height: int = 900) -> str:
    assert CHROMIUM is not None
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--window-size={WIDTH},{height}", "--virtual-time-budget=5000", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_page_fits_1280_pixels_and_every_plot_is_drawn(report_dir, tmp_path):
    page = (report_dir / "report.html").read_text()
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"))
    dom = _chromium("--dump-dom", probed.as_uri())
    found = json.loads(re.search(r"<title>(.*?)</title>", dom, re.S)[1].replace("&amp;", "&").replace("&lt;", "<")
                       .replace("&gt;", ">").replace("&quot;", '"'))
    assert found["scrollWidth"] <= found["clientWidth"] == WIDTH  # no sideways scrolling of the page
    assert [f["id"] for f in found["figures"]] == ["success_by_length", "cost_vs_success", "state_usage"]

    shot = tmp_path / "shot.png"
    _chromium(f"--screenshot={shot}", probed.as_uri(), height=found["height"])
    from PIL import Image

    image = Image.open(shot).convert("RGB")
    assert image.size == (WIDTH, found["height"])
    for figure in found["figures"]:
        assert figure["caption"] and 300 < figure["width"] <= WIDTH and figure["height"] > 150, figure
        left, top = int(figure["x"]), int(figure["y"])
        box = (left, top, left + int(figure["width"]), top + int(figure["height"]))
        pixels = list(image.crop(box).get_flattened_data())
        inked = sum(pixel != (255, 255, 255) for pixel in pixels) / len(pixels)
        assert 0.02 < inked < 0.9, (figure["id"], inked)  # drawn: neither blank nor a solid block
        # every agent visible in the plotting area (the legend, below it, left out), none hidden by another
        plotted = list(image.crop((box[0], box[1], box[2], top + int(0.7 * figure["height"]))).get_flattened_data())
        for agent, colour in COLOURS.items():
            near = sum(all(abs(a - b) <= 24 for a, b in zip(pixel, colour)) for pixel in plotted)
            assert near > 20, (figure["id"], agent, near)


def test_every_plot_has_a_title_and_the_page_a_glossary(report_dir):
    page = (report_dir / "report.html").read_text()
    for title in ("Success rate by episode length", "Success rate against prompt tokens", "Tokens and visits per state"):
        assert title in page
    assert page.count("<figcaption>") == 3 and '<h2 id="columns">Columns</h2>' in page
    assert '<th class="key" title="the agent' in page and "<dt>SR %</dt>" in page
    assert f'<p class="shared">model: {MODEL}</p>' in page  # one model: said once, not in every row
