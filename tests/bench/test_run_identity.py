"""A run's identity (what changes results) against what may change on --resume, secrets in stores,
and the checks made before anything is written."""

import json
import sqlite3

import pytest

from statebound.bench.evaluate import Execution, execute_run, prepare_run
from statebound.bench.identity import identity
from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.bench.store import ConfigMismatch, RunNotFound, RunStore
from statebound.errors import DefinitionError, ModelUnavailable
from statebound.llm.model_options import option_kind, redacted, result_options, transport_options

ORACLE = "function:statebound.benchmarks.toy:oracle"
QUIET = Execution(concurrency=4, progress=False)
RESUME = Execution(concurrency=4, progress=False, resume=True)


async def _run(out, *, agents=("direct", "verify"), models=(ORACLE,), seeds=(0,), execution=QUIET):
    config, benchmark = prepare_run("toy", agents=list(agents), models=list(models), seeds=list(seeds),
                                    benchmark_options={"count": 3})
    return await execute_run(config, out_dir=out, benchmark=benchmark, execution=execution)


@pytest.mark.parametrize("name, value, kind", [
    ("api_key", "sk-x", "secret"), ("auth_token", "t", "secret"), ("password", "p", "secret"),
    ("base_url", "http://u:pw@host/v1", "secret"), ("base_url", "http://host/v1", "transport"),
    ("timeout", 5, "transport"), ("attempts", 2, "transport"), ("transport", "httpx", "transport"),
    ("cache", "c.sqlite", "transport"), ("n_threads", 2, "transport"), ("n_batch", 64, "result"),
    ("mode", "chat", "result"), ("grammar_field", "grammar", "result"), ("reply_tokens", 9, "result"),
    ("max_tokens", 9, "result"),
])
def test_one_rule_says_what_each_option_is(name, value, kind):
    assert option_kind(name, value) == kind


def test_secrets_are_stored_as_fingerprints():
    options = {"api_key": "sk-abcdef0123456789", "base_url": "https://bob:pw123456@h/v1", "mode": "chat"}
    safe = redacted(options)
    assert safe["api_key"].startswith("secret:sha256:") and "abcdef" not in safe["api_key"]
    assert safe["base_url"] == "https://bob:***@h/v1"
    assert redacted(safe) == safe  # a stored configuration reads back the same
    assert redacted({"api_key": "sk-other-key-0000"})["api_key"] != safe["api_key"]  # keys told apart
    assert result_options(options) == {"mode": "chat"}
    assert set(transport_options(options)) == {"api_key", "base_url"}
    config = RunConfig(benchmark="toy", agents=("direct",), models=(ModelSpec("openai:m", options),), task_ids=("t",))
    text = json.dumps(config.to_json())
    assert "sk-abcdef0123456789" not in text and "pw123456" not in text


def test_identity_ignores_order_and_transport():
    def config(agents, seeds, options):
        return RunConfig(benchmark="toy", agents=agents, seeds=seeds, task_ids=("t1", "t2"),
                         models=(ModelSpec("openai:m", options),))

    one = config(("a", "b"), (0, 1), {"base_url": "http://h:1/v1", "api_key": "k1", "timeout": 5, "completions": True})
    two = config(("b", "a"), (1, 0), {"base_url": "http://h:2/v1", "api_key": "k2", "completions": True})
    assert identity(one) == identity(two)
    assert identity(one) != identity(config(("a", "b"), (0, 1), {"completions": False}))


async def test_agents_in_another_order_resume_in_the_stored_order(tmp_path):
    first = await _run(tmp_path, agents=("direct", "verify"), seeds=(0, 1))
    assert first.ran == 12
    again = await _run(tmp_path, agents=("verify", "direct"), seeds=(1, 0), execution=RESUME)
    assert (again.ran, again.skipped) == (0, 12)
    with RunStore(tmp_path, create=False) as store:
        assert store.config().agents == ("direct", "verify")


async def test_transport_options_may_change_and_are_recorded(tmp_path):
    model = ModelSpec(ORACLE, {"cache": str(tmp_path / "one.sqlite")})
    await _run(tmp_path / "run", models=(model,))
    moved = ModelSpec(ORACLE, {"cache": str(tmp_path / "two.sqlite")})
    outcome = await _run(tmp_path / "run", models=(moved,), execution=RESUME)
    assert outcome.ran == 0
    assert outcome.transport_changes == (f"{ORACLE} cache: {tmp_path / 'one.sqlite'} -> {tmp_path / 'two.sqlite'}",)
    with RunStore(tmp_path / "run", create=False) as store:
        assert store.config().models == (moved,)
    with sqlite3.connect(tmp_path / "run" / "run.sqlite") as db:
        history = json.loads(db.execute("SELECT value FROM run WHERE key = 'transport_history'").fetchone()[0])
    assert history[0]["models"] == [{"name": ORACLE, "options": {"cache": str(tmp_path / "one.sqlite")}}]
    with pytest.raises(ConfigMismatch, match=r"configuration differs \(models: .*'grammar': True"):
        await _run(tmp_path / "run", models=(ModelSpec(ORACLE, {"grammar": True}),), execution=RESUME)


async def test_resume_of_a_folder_without_a_run_is_refused_and_creates_nothing(tmp_path):
    with pytest.raises(RunNotFound, match="nothing to resume in .*typo: it does not exist; check the path"):
        await _run(tmp_path / "typo", execution=RESUME)
    assert not (tmp_path / "typo").exists()


async def test_a_bad_model_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ModelUnavailable, match="unknown model 'nosuch'"):
        await _run(tmp_path / "run", models=(ORACLE, "nosuch"))
    assert not (tmp_path / "run").exists()  # the good model's episodes did not run either
    (tmp_path / "file").write_text("")
    with pytest.raises(DefinitionError, match="is a file, not a run directory"):
        await _run(tmp_path / "file")


async def test_a_run_without_episodes_takes_a_new_configuration(tmp_path):
    config, _ = prepare_run("toy", agents=["direct"], models=["scripted"], benchmark_options={"count": 3})
    with RunStore(tmp_path) as store:  # a run that stopped before its first episode
        store.start(config, resume=False)
    outcome = await _run(tmp_path)
    assert outcome.ran == 6
    with pytest.raises(ConfigMismatch, match="already holds a run; pass --resume"):
        await _run(tmp_path)


async def test_a_finished_run_is_one_file(tmp_path):
    await _run(tmp_path)
    from statebound.report.status import run_progress

    run_progress(tmp_path)  # a reader afterwards
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("run.sqlite")) == ["run.sqlite"]


async def test_status_of_a_folder_skips_a_run_that_never_started(tmp_path):
    from typer.testing import CliRunner

    from statebound.cli.app import app

    await _run(tmp_path / "started")
    RunStore(tmp_path / "never").close()  # a store left by an older version's refused run
    result = CliRunner().invoke(app, ["status", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert [line.split("\t")[1:4] for line in result.stdout.splitlines()[1:3]] == [
        ["direct", ORACLE, "3/3"], ["verify", ORACLE, "3/3"]]
    assert result.stderr.strip() == f"skipped: {tmp_path / 'never'} holds a store but no run configuration (the run never started)"
