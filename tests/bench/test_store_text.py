"""An episode whose texts hold what no UTF-8 file can (a lone surrogate, as a model server's JSON
escape ``\\ud800`` gives) is stored whole, the surrogate as its escape, instead of stopping the run;
every reader then shows it (issue #51: the trajectory is kept whatever an episode did)."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient
from typer.testing import CliRunner

from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.store import RunStore
from statebound.cli.app import app
from statebound.contract.result import EpisodeResult
from statebound.view.app import build_app
from statebound.view.sources import find_sources


def test_lone_surrogates_are_stored_as_their_escape_and_every_reader_shows_them(tmp_path: Path) -> None:
    run = tmp_path / "run"
    trajectory = [{"state": "S", "role": "assistant", "source": "llm", "content": "reply \ud800 and \x00"}]
    result = EpisodeResult(task="t1", agent="a", model="m", success=False, reward=0.0, turns=1,
                           error="RuntimeError: bad \udcff", trajectory=trajectory, meta={"answer": "x \ud83d"})
    with RunStore(run) as store:
        store.start(RunConfig(benchmark="hand", agents=("a",), models=(ModelSpec("m"),), task_ids=("t1",)),
                    resume=False)
        store.save(result, benchmark="hand", position=0)
    with RunStore(run, read_only=True) as store:
        (stored,) = store.episodes(task="t1")
    assert stored.trajectory[0]["content"] == "reply \\ud800 and \x00"
    assert stored.error == "RuntimeError: bad \\udcff" and stored.meta["answer"] == "x \\ud83d"
    for args in (["show", str(run), "--task", "t1"], ["status", str(run)], ["report", str(run), "--no-plots"]):
        assert CliRunner().invoke(app, args).exit_code == 0, args
    page = TestClient(build_app(find_sources([run]))).get("/run/run/episode", params={"task": "t1", "agent": "a"})
    assert page.status_code == 200 and "reply \\ud800" in page.text
