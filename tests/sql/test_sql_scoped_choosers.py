"""``-O choice=`` on the scoped agents: the harness refuses a chooser the model cannot run before
the first episode (naming what is missing and which choice would work), and the SQL machine runs
with lettered options on a model that only reports its most likely tokens."""

from __future__ import annotations

import asyncio

import pytest
from typer.testing import CliRunner

from statebound.bench.episode import check_agent
from statebound.bench.evaluate import run_task
from statebound.bench.registry import LoadedBenchmark, load_benchmark
from statebound.cli.app import app
from statebound.contract.benchmark import EpisodeLimits
from statebound.errors import DefinitionError, UnsupportedFeature
from statebound.llm.base import Capabilities, Choice, Request, TokenLogprob
from statebound.llm.testing import FunctionLLM

SERVER = Capabilities(chat=True, completion=True, logprobs=True, top_logprobs=20)  # what a server offers
SCOPED = {"intercode-sql": ("stateflow-scoped", "stateflow-scoped-named"),
          "intercode-bash": ("stateflow-scoped", "stateflow-scoped-compose"),
          "gsm8k": ("stateflow-scoped",), "hotpotqa": ("stateflow-scoped",)}


def bench(name: str, **options: object) -> LoadedBenchmark:
    return load_benchmark(name, options)


def first_letter(request: Request) -> Choice:
    """Always the first option: "A", with "B" less likely."""
    return Choice(text="A", logprobs=(TokenLogprob("A", -0.1, (("A", -0.1), ("B", -2.5))),))


@pytest.mark.parametrize(("benchmark", "agent"), [(b, a) for b, agents in SCOPED.items() for a in agents])
def test_every_scoped_agent_checks_its_chooser_against_the_model(benchmark, agent):
    server = FunctionLLM(first_letter, model="openai:local", capabilities=SERVER)
    loaded = bench(benchmark)
    check_agent(loaded.benchmark, agent, loaded.agent(agent), server)  # auto: label
    scoring = bench(benchmark, choice="score")
    with pytest.raises(UnsupportedFeature, match=rf"{benchmark} agent {agent}: 'openai:local' cannot run -O "
                                                 r"choice=score: it lacks .*; -O choice=label works with it"):
        check_agent(scoring.benchmark, agent, scoring.agent(agent), server)
    control = f"{agent}-random"
    check_agent(scoring.benchmark, control, scoring.agent(control), server)  # the control needs no chooser


def test_a_chooser_that_is_not_one_is_refused_with_the_choices():
    with pytest.raises(DefinitionError, match="choice='best'.*'auto', 'score', 'label', 'grammar' or 'random'"):
        bench("intercode-sql", choice="best")


def test_eval_stops_before_the_first_episode_and_stores_nothing(tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "intercode-sql", "-a", "stateflow-scoped", "-m",
                                      "function:statebound.benchmarks.toy:oracle", "--tasks", "3",
                                      "-O", "choice=label", "--out", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert "cannot run -O choice=label: it lacks the most likely tokens' log-probabilities" in result.output


def test_the_sql_machine_picks_by_letter_on_a_server_double(sqlite_backend):
    llm = FunctionLLM(first_letter, model="openai:local", capabilities=SERVER)
    loaded = load_benchmark("intercode-sql", {"cache_dir": str(sqlite_backend.directory.parent.parent),
                                              "choice": "label"})
    task = loaded.benchmark.tasks()[0]
    result = asyncio.run(run_task(loaded, "stateflow-scoped", task.id, llm=llm, limits=EpisodeLimits(max_turns=10)))
    assert result.error is None and result.exit_state == "End"
    chosen = [step["choice"] for step in result.trajectory if isinstance(step.get("choice"), dict)]
    assert chosen and {c["method"] for c in chosen if c["scores"] is not None} == {"label"}
    assert all(r.top_logprobs == 20 and r.max_tokens == 1 for r in llm.requests)
