"""What a newcomer meets on the command line (issue #41): structured options, resuming from the
store, replays, threads, one flag vocabulary and messages that list what exists."""

from __future__ import annotations

import shlex

import pytest
from typer.testing import CliRunner

from statebound.cli.app import app

ORACLE = "function:statebound.benchmarks.toy:oracle"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


# --- 1. structured model options ------------------------------------------------------------
def test_python_style_lists_are_read_as_lists() -> None:
    result = invoke("run", "arithmetic", "-m", "scripted", "--model-option",
                    "replies=['I would guess', 'Expression: 3*12-5']")
    assert result.exit_code == 0, result.output
    assert "llm solver: I would guess" in result.output and "Result: 3*12-5 = 31" in result.output


@pytest.mark.parametrize(("value", "words"), [
    ("replies=[Atlantis]", "neither JSON nor a Python literal"),
    ("replies=Atlantis", "must be a list of strings"),
])
def test_a_structured_option_that_does_not_parse_is_one_line(value: str, words: str) -> None:
    result = invoke("run", "arithmetic", "-m", "scripted", "--model-option", value)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "replies=[" in lines[0], result.stderr


# --- 2. resuming from the store, adding agents, models, seeds ------------------------------
def _eval(*args: str):
    return invoke("eval", *args, "--no-progress", "--no-plots")


def test_resume_with_only_out_runs_the_stored_configuration(tmp_path) -> None:
    out = str(tmp_path / "toy")
    first = _eval("toy", "-a", "direct", "-m", ORACLE, "--limit", "3", "-O", "count=6", "--out", out)
    assert first.exit_code == 0, first.output
    again = _eval("--out", out, "--resume")
    assert again.exit_code == 0, again.output
    said = again.output.splitlines()[0]
    assert said == (f"resuming {out}: toy -O count=6; agents direct; models {ORACLE}; seeds 0; 3 tasks; "
                    "max_turns 10")
    assert "0 episodes run, 3 already stored" in again.output


def test_agents_models_and_seeds_added_to_a_run_run_only_their_episodes(tmp_path) -> None:
    from statebound.bench.store import RunStore

    out = str(tmp_path / "toy")
    assert _eval("toy", "-a", "direct", "-m", ORACLE, "--limit", "3", "--out", out).exit_code == 0
    grown = _eval("--out", out, "--resume", "-a", "verify", "--seed", "1")
    assert grown.exit_code == 0, grown.output
    assert "adding to the run: agents: verify; seeds: 1 (only their episodes run)" in grown.output
    assert "9 episodes run, 3 already stored" in grown.output  # (2 agents x 2 seeds - 1) x 3 tasks
    with RunStore(out, read_only=True) as store:
        config = store.config()
        assert (config.agents, config.seeds) == (("direct", "verify"), (0, 1))
        assert len(store.finished()) == 12


def test_resume_names_what_cannot_change(tmp_path) -> None:
    out = str(tmp_path / "toy")
    assert _eval("toy", "-a", "direct", "-m", ORACLE, "--limit", "3", "--out", out).exit_code == 0
    other = _eval("intercode-sql", "--out", out, "--resume")
    assert other.exit_code == 2 and f"{out} holds a toy run, not intercode-sql" in other.stderr
    fewer = _eval("--out", out, "--resume", "--limit", "2")
    assert fewer.exit_code == 2 and "task_ids: stored" in fewer.stderr
    assert "Agents, models and seeds may be added" in fewer.stderr


def test_eval_defaults_to_the_configured_model(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("STATEBOUND_MODEL", ORACLE)
    result = _eval("toy", "-a", "direct", "--limit", "2", "--out", str(tmp_path / "toy"))
    assert result.exit_code == 0, result.output
    assert "2 episodes run" in result.output and ORACLE in result.output


# --- #38 item 9: values checked when the command is read -----------------------------------
@pytest.mark.parametrize(("flags", "words"), [
    (["--tasks", ""], "--tasks '' names no task"),
    (["--tasks", ",,,"], "--tasks ',,,' names no task"),
    (["--max-turns", "0"], "'--max-turns'"),
    (["--max-turns", "-3"], "'--max-turns'"),
    (["--max-tokens", "0"], "'--max-tokens'"),
    (["--timeout", "-1"], "--timeout must be more than 0 seconds"),
    (["--timeout", "0"], "--timeout must be more than 0 seconds"),
])
def test_empty_task_lists_and_limits_below_one_are_refused(tmp_path, flags: list[str], words: str) -> None:
    result = _eval("toy", "-a", "direct", "-m", ORACLE, *flags, "--out", str(tmp_path / "r"))
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr, result.stderr
    assert not (tmp_path / "r").exists()


def test_a_config_file_that_is_not_utf8_is_one_line(tmp_path, monkeypatch) -> None:
    config = tmp_path / "config.toml"
    config.write_bytes('model = "caf\u00e9"\n'.encode("latin-1"))
    monkeypatch.setenv("STATEBOUND_CONFIG", str(config))
    result = invoke("models")
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert result.stderr.strip() == f"error: config file {config} is not UTF-8 text (byte 12 cannot be read); save it as UTF-8"


@pytest.mark.parametrize("how", ["file", "flag"])
def test_an_api_key_that_is_not_a_string_is_refused(tmp_path, monkeypatch, how: str) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config.toml"
    config.write_text('[openai]\napi_key = ["sk-abcdefghijklmnopqrstuvwxyz"]\n' if how == "file" else "")
    monkeypatch.setenv("STATEBOUND_CONFIG", str(config))
    option = ["--model-option", "api_key=['sk-abcdefghijklmnopqrstuvwxyz']"] if how == "flag" else []
    result = invoke("run", "arithmetic", "-m", "openai:gpt-4o-mini", *option)
    assert result.exit_code == 2, result.output
    assert "api_key" in result.stderr and "must be a string" in result.stderr and "got a list" in result.stderr
    assert "abcdefghijklmnop" not in result.output


# --- 3. a replay runs its file's tasks ------------------------------------------------------
def test_a_replay_runs_the_tasks_of_its_file_unless_tasks_says_otherwise(tmp_path) -> None:
    from statebound.bench.store import RunStore

    replay = tmp_path / "replay.jsonl"
    replay.write_text('{"task": "7", "actions": ["submit"]}\n{"task": "3", "actions": ["execute[SELECT 1]", "submit"]}\n')
    common = ("intercode-sql", "-a", "replay", "-O", f"replay={replay}")
    ran = _eval(*common, "--out", str(tmp_path / "file"))
    assert ran.exit_code == 0, ran.output
    with RunStore(tmp_path / "file", read_only=True) as store:
        assert store.config().task_ids == ("3", "7")  # the benchmark's order
        assert sorted(r.task for r in store.results()) == ["3", "7"]
    chosen = _eval(*common, "--tasks", "3", "--out", str(tmp_path / "chosen"))
    assert chosen.exit_code == 0 and "1 episodes run" in chosen.output
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"task": "no-such-task", "actions": ["submit"]}\n')
    refused = _eval("intercode-sql", "-a", "replay", "-O", f"replay={foreign}", "--out", str(tmp_path / "r"))
    assert refused.exit_code == 2 and "replay can run no task of intercode-sql" in refused.stderr


# --- 6. one flag vocabulary -----------------------------------------------------------------
def test_spec_draw_takes_out_like_flow_draw_and_keeps_out_dir_hidden(tmp_path) -> None:
    for flag, folder in (("--out", "new"), ("--out-dir", "old")):
        result = invoke("spec", "draw", "react", flag, str(tmp_path / folder))
        assert result.exit_code == 0, result.output
        assert (tmp_path / folder / "react-agent.mmd").is_file()
    shown = invoke("spec", "draw", "--help").output
    assert "--out " in shown and "--out-dir" not in shown


def test_status_without_an_argument_reads_runs(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    missing = invoke("status")
    assert missing.exit_code == 2 and "runs does not exist" in missing.stderr
    assert _eval("toy", "-a", "direct", "-m", ORACLE, "--limit", "2", "--out", "runs/toy").exit_code == 0
    found = invoke("status")
    assert found.exit_code == 0 and "toy\tdirect" in found.output and "2/2" in found.output


def test_models_lists_every_form_a_name_takes() -> None:
    result = invoke("models")
    assert result.exit_code == 0, result.output
    for form in ("function:module:callable", "openai:MODEL", "gguf:PATH", "scripted", "smollm2"):
        assert form in result.output


# --- 7. messages that list what exists -------------------------------------------------------
def test_show_lists_what_the_run_holds(tmp_path) -> None:
    out = str(tmp_path / "toy")
    assert _eval("toy", "-a", "direct", "-m", ORACLE, "--limit", "2", "--out", out).exit_code == 0
    agent = invoke("show", out, "--task", "toy-001", "--agent", "react")
    assert agent.exit_code == 1
    assert agent.stderr.strip() == (f"error: no stored episode of task 'toy-001' --agent react in {out}; "
                                    f"stored for task toy-001: agents direct; models {ORACLE}; seeds 0")
    task = invoke("show", out, "--task", "3")
    assert "stored tasks: toy-000, toy-001" in task.stderr


def test_a_run_directory_that_does_not_exist_is_named_so(tmp_path) -> None:
    assert _eval("toy", "-a", "direct", "-m", ORACLE, "--limit", "1", "--out", str(tmp_path / "toy")).exit_code == 0
    for command in (["report"], ["status"], ["show", "--task", "1"]):
        result = invoke(*command[:1], str(tmp_path / "nope"), *command[1:])
        assert result.exit_code == 2
        assert f"{tmp_path / 'nope'} does not exist; run directories in {tmp_path}: toy" in result.stderr


def test_list_agents_shows_allowed_values() -> None:
    result = invoke("eval", "intercode-sql", "--list-agents")
    assert "db='sqlite' (one of sqlite, mysql)" in result.output
    assert "format='free' (one of free, grammar)" in result.output


def test_citations_name_the_papers() -> None:
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    texts = {path: path.read_text(encoding="utf-8") for path in (root / "README.md", *(root / "docs").glob("*.md"))}
    listed = "".join(invoke("eval", name, "--list-agents").output for name in ("intercode-sql", "intercode-bash"))
    texts[Path("--list-agents")] = listed
    for path, text in texts.items():
        assert not re.search(r"\b(paper|blog),? 00\d", text), path
    assert "StateFlow, Wu et al. 2024" in listed


def test_an_unclosed_parenthesis_is_reported_where_it_is_missing() -> None:
    from statebound.errors import SpecError
    from statebound.spec import parse

    text = ('(define x\n'
            '  (:states (A (:text "[A]")) (B (:text "[B]"))\n'
            '  (:behavior (next A B)))\n')
    with pytest.raises(SpecError) as raised:
        parse(text, source_name="x.spec")
    assert (raised.value.line, raised.value.column) == (2, 3)
    assert "add ')' at the end of line 2" in str(raised.value) and "the text ends at 4:1" in str(raised.value)
    with pytest.raises(SpecError) as one_line:
        parse('(define x (:states (A (:text "[A]")) (:behavior (next A))', source_name="y.spec")
    assert (one_line.value.line, one_line.value.column) == (1, 11)
    assert "at 1:58" in str(one_line.value)


# --- 5. one public entry point; custom backends checked --------------------------------------
def test_the_public_names_come_from_the_top_package_and_stay_light() -> None:
    from test_light_imports import heavy_modules_after

    import statebound
    from statebound import CallLLM, Flow, FunctionLLM, Pick, State  # noqa: F401
    from statebound.llm import FunctionLLM as from_llm

    assert from_llm is FunctionLLM
    assert all(getattr(statebound, name) is not None for name in statebound.__all__)
    assert set(statebound.__all__) - {"__version__"} == set(statebound._WHERE)
    assert heavy_modules_after("import statebound") == []
    assert heavy_modules_after("from statebound import Flow, State, Pick, CallLLM, FunctionLLM") == []


def _one_state_flow():
    from statebound import CallLLM, Flow, State, always

    return Flow(name="one", initial="Ask", states=[
        State("Ask", outputs=[CallLLM(max_tokens=8)], transitions=[(always(), "End")]),
        State("End", final=True),
    ])


class _Backend:
    """A hand-written backend, as a user writes one."""

    def __init__(self, *, model: bool = True, calls: int = 1) -> None:
        from statebound import Capabilities

        self.model, self.capabilities, self._model, self._calls = "mine", Capabilities(chat=True), model, calls

    async def complete(self, request):
        from statebound import Completion, Sample, Usage

        usage = Usage(prompt_tokens=3, completion_tokens=1, calls=self._calls)
        if not self._model:
            return Completion(choices=(Sample("4"),), usage=usage)  # model= forgotten
        return Completion(choices=(Sample("4"),), usage=usage, model=self.model)


@pytest.mark.parametrize(("backend", "words"), [
    (_Backend(model=False), "_Backend.complete: Completion.__init__() missing 1 required positional argument: 'model'"),
    (_Backend(calls=0), "_Backend.complete returned Usage.calls=0: each request counts as a call, so set Usage(..., calls=1)"),
])
def test_a_backend_that_breaks_the_protocol_is_named(backend, words: str) -> None:
    from statebound import BackendProtocolError

    result = _one_state_flow().run_sync("2 + 2?", llm=backend)
    assert result.exit_reason.value == "error" and isinstance(result.error, BackendProtocolError)
    assert str(result.error).startswith(words), result.error
    assert _one_state_flow().run_sync("2 + 2?", llm=_Backend()).usage.calls == 1


def test_an_object_that_is_not_a_backend_is_refused_before_the_run() -> None:
    from statebound import BackendProtocolError

    class NoCapabilities:
        model = "mine"

        def complete(self, request):  # not async
            return None

    with pytest.raises(BackendProtocolError, match=r"NoCapabilities is not an LLM backend: it needs a `capabilities` "
                                                   r"attribute .*; `complete` declared `async def`"):
        _one_state_flow().run_sync("2 + 2?", llm=NoCapabilities())


# --- 4. threads in command-line terms; fork from the command line ----------------------------
def _thread(store: str, *more: str):
    return invoke("run", "arithmetic", "-m", "scripted", "--model-option", "replies=['I would guess']",
                  "--store", store, *more)


def test_resuming_a_thread_the_store_does_not_hold_names_those_it_does(tmp_path) -> None:
    store = str(tmp_path / "live.db")
    _thread(store, "--thread", "t1")
    result = _thread(store, "--thread", "nope", "--resume")
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"error: {store} has no thread 'nope' (its threads: t1); start it with "
                                     f"statebound run arithmetic --store {store} --thread nope (without --resume)")
    assert "continuing" not in result.output and "flow.run" not in result.output


def test_resuming_a_thread_with_another_model_is_refused_unless_asked(tmp_path) -> None:
    store = str(tmp_path / "live.db")
    _thread(store, "--thread", "t1")
    other = invoke("run", "arithmetic", "-m", ORACLE, "--store", store, "--thread", "t1", "--resume")
    assert other.exit_code == 2
    assert f"thread 't1' ran with scripted, not {ORACLE}: add -m scripted" in other.stderr
    switched = invoke("run", "arithmetic", "-m", ORACLE, "--store", store, "--thread", "t1", "--resume",
                      "--switch-model")
    assert "ran with scripted" not in switched.output and "continuing from its last checkpoint" in switched.output


def test_a_thread_forked_from_the_command_line_runs_on_with_the_edit(tmp_path) -> None:
    store = str(tmp_path / "live.db")
    assert _thread(store, "--thread", "t1").exit_code == 1  # the guess is not an expression
    listed = invoke("threads", store, "t1")
    assert "#1 llm: 'I would guess'" in listed.output and "--fork SEQ" in listed.output
    forked = invoke("threads", store, "t1", "--fork", "2", "--edit", "1", "Expression: 3*12-5")
    assert forked.exit_code == 0, forked.output
    assert forked.output.strip() == (f"t1-at-2: a new thread from t1 at checkpoint 2 (history entry #1 edited); "
                                     f"run it on with\n  statebound run arithmetic -m scripted --store {store} "
                                     "--thread t1-at-2 --resume")
    ran = invoke(*shlex.split(forked.output.strip().splitlines()[-1])[1:])  # the printed command, as printed
    assert ran.exit_code == 0 and "Result: 3*12-5 = 31" in ran.output
    bad = invoke("threads", store, "t1", "--fork", "2", "--edit", "9", "x")
    assert bad.exit_code == 2 and "cannot edit history entry 9" in bad.stderr


# --- #38 item 7: threads reads a file without changing it ------------------------------------
def test_threads_refuses_a_file_that_is_not_a_checkpoint_store_and_leaves_it_as_it_was(tmp_path) -> None:
    import hashlib
    import sqlite3

    out = tmp_path / "toy"
    assert _eval("toy", "-a", "direct", "-m", ORACLE, "--limit", "1", "--out", str(out)).exit_code == 0
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE people (name TEXT)")
    (tmp_path / "notes.txt").write_text("not a database at all, just some text " * 40)
    cases = {out / "run.sqlite": "a run store of statebound eval",
             other: "a SQLite database with other tables (people)",
             tmp_path / "notes.txt": "not a SQLite database"}
    for path, what in cases.items():
        before = hashlib.sha256(path.read_bytes()).hexdigest()
        for args in ([], ["t1"], ["t1", "--fork", "0"]):
            result = invoke("threads", str(path), *args)
            assert result.exit_code == 2, result.output
            assert result.stderr.strip().startswith(f"error: {path} is not a checkpoint store: it is {what}")
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before
        assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name + "-")) == []
    with sqlite3.connect(out / "run.sqlite") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert {name for (name,) in db.execute("SELECT name FROM sqlite_master")} == {"run", "episodes",
                                                                                       "sqlite_autoindex_run_1",
                                                                                       "sqlite_autoindex_episodes_1"}
