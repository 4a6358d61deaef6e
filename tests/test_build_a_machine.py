"""docs/build-a-machine.md as a user follows it: the machine file is under 100 lines, its diagram is
the one the page shows, flow check finds nothing, and `statebound eval FILE.py:BENCHMARK -a
FILE.py:AGENT` runs the machine on the embedded model beside its control."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from statebound.bench.store import RunStore
from statebound.cli.app import app
from statebound.llm.model_files import llama_cpp_missing
from statebound.user_files import load_ref

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "build-a-machine.md"
FILE = "docs/examples/tickets.py"


def test_the_machine_fits_in_under_100_lines_and_draws_as_the_page_shows():
    assert len((ROOT / FILE).read_text(encoding="utf-8").splitlines()) < 100
    flow = load_ref(f"{ROOT / FILE}:flow", "a Flow")
    (diagram,) = re.findall(r"^```mermaid\n(.*?)^```", PAGE.read_text(encoding="utf-8"), flags=re.M | re.S)
    assert diagram.strip() == flow.to_mermaid().strip()
    result = CliRunner().invoke(app, ["flow", "check", f"{ROOT / FILE}:flow", "--strict"])
    assert result.exit_code == 0 and "0 warning(s)" in result.output


def test_a_file_that_names_no_benchmark_is_refused_in_one_line(tmp_path):
    result = CliRunner().invoke(app, ["eval", f"{ROOT / FILE}:Tickest", "-a", f"{ROOT / FILE}:scoped",
                                      "-m", "scripted", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and "has no variable 'Tickest'" in result.output and "Tickets" in result.output


@pytest.mark.integration
@pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed")
def test_eval_runs_the_files_benchmark_and_agents(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the page's commands name the file from the checkout's root
    monkeypatch.setenv("STATEBOUND_THREADS", "1")
    out = tmp_path / "tickets"
    result = CliRunner().invoke(app, ["eval", f"{FILE}:Tickets", "-a", f"{FILE}:scoped", "-a", f"{FILE}:control",
                                      "-m", "smollm2", "-j", "1", "--tasks", "1,2,3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    with RunStore(out, create=False, read_only=True) as store:
        results = store.results(with_trajectories=True)
    assert sorted(r.agent for r in results) == [f"{FILE}:control"] * 3 + [f"{FILE}:scoped"] * 3
    assert all(r.error is None for r in results)
    scoped = [r for r in results if r.agent.endswith(":scoped")]
    assert all(r.prompt_tokens > 0 for r in scoped)  # the model scored the parts; the control read nothing
    picks = [e["choice"] for r in scoped for e in r.trajectory if isinstance(e.get("choice"), dict)]
    assert {p["name"] for p in picks} == {"team", "priority"} and all(p["method"] == "score" for p in picks)
