"""statebound eval traced: a run span, an episode span per task and agent below it, each with its
outcome, and the agent's LLM calls below its episode."""

from __future__ import annotations

from typer.testing import CliRunner

from statebound.cli.app import app

ORACLE = "function:statebound.benchmarks.toy:oracle"


def test_eval_makes_a_run_span_with_an_episode_span_per_task(spans, tmp_path):
    result = CliRunner().invoke(app, ["eval", "toy", "-a", "direct", "-m", ORACLE, "--limit", "2", "-j", "1",
                                      "--no-progress", "--no-plots", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    finished = spans.get_finished_spans()
    (run,) = [s for s in finished if s.name == "run toy"]
    assert run.parent is None and run.attributes["statebound.episodes"] == 2
    episodes = [s for s in finished if s.name.startswith("episode ")]
    assert len(episodes) == 2 and all(s.parent.span_id == run.context.span_id for s in episodes)
    for episode in episodes:
        assert episode.attributes["statebound.benchmark"] == "toy"
        assert episode.attributes["statebound.agent"] == "direct"
        assert episode.attributes["statebound.success"] is True
        assert episode.attributes["statebound.reward"] == 1.0
        calls = [s for s in finished if s.name.startswith(("chat ", "text_completion "))
                 and s.context.trace_id == episode.context.trace_id and s.parent.span_id == episode.context.span_id]
        assert calls and all(s.attributes["gen_ai.request.model"] for s in calls)
    assert len({s.attributes["statebound.task.id"] for s in episodes}) == 2
