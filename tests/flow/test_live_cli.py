"""``statebound run --store --thread [--resume --input]`` and ``statebound threads``; the run
command's model names and options as ``statebound eval`` takes them, and its one-line errors."""

from __future__ import annotations

import shlex
import textwrap

import pytest
from typer.testing import CliRunner

from statebound.cli.app import app

runner = CliRunner()

FLOWS = textwrap.dedent('''
    from pathlib import Path

    from statebound.flow import AskHuman, CallLLM, CallTool, Flow, State, always, contains

    MARK = Path(__file__).with_name("crashed-once")


    def publish(ctx):
        if not MARK.exists():                # the first run dies here, after the model replied
            MARK.write_text("x")
            raise RuntimeError("the machine went down")
        return "published " + ctx.last_of("llm").content


    flow = Flow(name="post", initial="Write", states=[
        State("Write", outputs=[CallLLM()], transitions=[(always(), "Approve")]),
        State("Approve", outputs=[AskHuman("Publish it?")],
              transitions=[(contains("yes", source="human"), "Publish"), (always(), "End")]),
        State("Publish", outputs=[CallTool(publish, blocking=False)], transitions=[(always(), "End")]),
        State("End", final=True),
    ])
''')

RESPONDER = textwrap.dedent('''
    import os


    def respond(request):
        with open(os.environ["CALL_LOG"], "a") as log:
            log.write(request.messages[-1].content + "\\n")
        return "a post about cats"
''')


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "flows.py").write_text(FLOWS)
    (tmp_path / "cat_model.py").write_text(RESPONDER)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("CALL_LOG", str(tmp_path / "calls.log"))
    monkeypatch.setenv("STATEBOUND_CONFIG", str(tmp_path / "no-config.toml"))
    return tmp_path


def _run(project, *args: str):
    return runner.invoke(app, ["run", f"{project / 'flows.py'}:flow", "--model", "function:cat_model:respond",
                               "--store", str(project / "runs.db"), "--thread", "t1", *args])


def printed_command(output: str, prefix: str, answer: str | None = None) -> list[str]:
    """The command a line of ``output`` gives after ``prefix``, split as a shell would (``your
    answer`` replaced by ``answer``), without the leading ``statebound``."""
    line = next(line for line in output.splitlines() if line.strip().startswith(prefix))
    words = shlex.split(line.strip().removeprefix(prefix))
    assert words[0] == "statebound", line
    return [answer if word == "your answer" and answer is not None else word for word in words[1:]]


def test_pause_answer_crash_resume_and_listing(project):
    first = _run(project, "--task", "Write about cats.")
    assert first.exit_code == 3, first.output
    assert "paused: Publish it?" in first.output
    hint = printed_command(first.output, "answer with:", answer="yes")
    assert hint == ["run", f"{project / 'flows.py'}:flow", "-m", "function:cat_model:respond", "--store",
                    str(project / "runs.db"), "--thread", "t1", "--resume", "--input", "yes"]
    crashed = runner.invoke(app, hint)  # the printed command, as printed, from another directory's view
    assert crashed.exit_code == 1 and "the machine went down" in crashed.output
    listed = runner.invoke(app, ["threads", str(project / "runs.db")])
    assert listed.exit_code == 0 and "t1" in listed.output and "error" in listed.output
    done = _run(project, "--resume")
    assert done.exit_code == 0, done.output
    assert "published a post about cats" in done.output and "exit: End (final)" in done.output
    assert (project / "calls.log").read_text().splitlines() == ["Write about cats."]  # asked once
    checkpoints = runner.invoke(app, ["threads", str(project / "runs.db"), "t1"])
    assert checkpoints.exit_code == 0
    assert "pause" in checkpoints.output and "human: 'yes'" in checkpoints.output
    again = _run(project, "--task", "Write about cats.")
    assert again.exit_code == 2 and "add --resume to continue it" in again.output


def test_a_person_at_the_terminal_answers_the_pause(project, monkeypatch):
    monkeypatch.setattr("statebound.cli.run.at_terminal", lambda: True)
    result = runner.invoke(app, ["run", f"{project / 'flows.py'}:flow", "--model", "function:cat_model:respond",
                                 "--store", str(project / "runs.db"), "--thread", "t2", "--task", "cats"],
                           input="no\n")
    assert result.exit_code == 0, result.output
    assert "t2 is paused: Publish it?" in result.output and "human: no" in result.output
    assert "exit: End (final)" in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["--model", "gpt-17"], "unknown model 'gpt-17'"),
    (["--model", "scripted", "--model-option", "colour=blue"], "unknown option(s) colour"),
    (["--model", "function:cat_model:respond", "--model-option", "bad"], "--model-option"),
    (["--thread", "t1"], "--store and --thread go together"),
    (["--resume"], "--resume needs --store"),
])
def test_mistakes_are_one_line(project, args, message):
    result = runner.invoke(app, ["run", f"{project / 'flows.py'}:flow", "--task", "x", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


def test_the_default_model_comes_from_the_config_file(project, monkeypatch):
    config = project / "config.toml"
    monkeypatch.setenv("STATEBOUND_CONFIG", str(config))
    config.write_text('model = "function:cat_model:respond"\n')
    ok = runner.invoke(app, ["run", f"{project / 'flows.py'}:flow", "--task", "cats"])
    assert ok.exit_code == 3 and "a post about cats" in ok.output  # paused at the question: no store
    monkeypatch.setenv("STATEBOUND_MODEL", "no-such-model")
    assert "unknown model 'no-such-model'" in runner.invoke(app, ["run", f"{project / 'flows.py'}:flow", "--task", "x"]).output
    monkeypatch.delenv("STATEBOUND_MODEL")
    config.write_text("model = [broken\n")
    broken = runner.invoke(app, ["run", f"{project / 'flows.py'}:flow", "--task", "x"])
    assert broken.exit_code == 2 and "is not valid TOML" in broken.output and "Traceback" not in broken.output


@pytest.mark.parametrize("command", [["run"], ["flow", "check"]])
def test_flow_files_that_do_not_load_are_one_line(tmp_path, command):
    broken = tmp_path / "broken.py"
    broken.write_text("from statebound.flow import Flow\n\nflow = Flow(name='x',\n")
    task = ["--task", "x"] if command == ["run"] else []
    result = runner.invoke(app, [*command, f"{broken}:flow", *task])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert f"{broken}:3" in result.output and "syntax error" in result.output
    invalid = tmp_path / "invalid.py"
    invalid.write_text("from statebound.flow import Flow, State\n\nflow = Flow(name='x', initial='A', states=[State('A')])\n")
    result = runner.invoke(app, [*command, f"{invalid}:flow"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "flow 'x' is not valid" in result.output
    failing = tmp_path / "failing.py"
    failing.write_text("import json\n\nflow = json.loads('{')\n")
    result = runner.invoke(app, [*command, f"{failing}:flow"])
    assert f"{failing}:3: JSONDecodeError" in result.output and "Traceback" not in result.output


def test_threads_of_a_missing_store(tmp_path):
    result = runner.invoke(app, ["threads", str(tmp_path / "none.db")])
    assert result.exit_code == 2 and "no store at" in result.output
    assert not (tmp_path / "none.db").exists()


def test_a_store_in_a_folder_not_made_yet_is_made_there(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # docs/tour.md's lines, in a fresh checkout with no runs/ folder
    ran = runner.invoke(app, ["run", "arithmetic", "-m", "scripted", "--model-option", 'replies=["3*12-5"]',
                              "--store", "runs/live.sqlite", "--thread", "t1"])
    assert ran.exit_code == 0, ran.output
    listed = runner.invoke(app, ["threads", "runs/live.sqlite"])
    assert listed.exit_code == 0 and "t1" in listed.output


def test_a_store_whose_folder_cannot_be_made_is_named(tmp_path):
    blocker = tmp_path / "runs"
    blocker.write_text("a file where the folder would be")
    ran = runner.invoke(app, ["run", "arithmetic", "-m", "scripted", "--store", str(blocker / "live.sqlite"),
                              "--thread", "t1"])
    assert ran.exit_code != 0 and f"cannot make the checkpoint store's folder {blocker}" in ran.output
