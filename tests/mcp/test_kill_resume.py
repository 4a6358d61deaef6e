"""kill -9 of ``statebound run`` while a tool of the real filesystem MCP server runs: a destructive
tool (write_file) makes the resumed run ask repeat/skip; a read-only one (read_text_file) runs
again without asking. The server is held stopped (SIGSTOP) so that the call is surely under way
when the process dies; once let go, the orphaned server ends (its stdin closed): no process is
left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp_helpers import ROOT, filesystem

from statebound.flow.live import SQLiteCheckpointer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FLOW = '''
from statebound import CallLLM, Flow, Instruction, State, always, called, contains
from statebound.mcp import mcp

act = CallLLM(tools=[mcp("files", "write_file", "read_text_file")])
flow = Flow(name="files", initial="Act", max_turns=4, states=[
    State("Act", outputs=[Instruction("Do it."), act], transitions=[(called(), "Answer"), (always(), "End")]),
    State("Answer", outputs=[act], transitions=[(contains("done"), "End"), (always(), "Answer")]),
    State("End", final=True),
])
'''
MODEL = '''
import json
import os
import signal
import threading
import time

import psutil

from statebound.llm.base import Choice, ToolCall


def respond(request):
    log = os.environ["FILES_LOG"]
    with open(log + ".asked", "a") as asked:
        asked.write(request.messages[-1].role + "\\n")
    if request.messages[-1].role == "tool":
        return "done"
    if not os.path.exists(log + ".died"):  # the first run: hold the server, then die mid-call
        open(log + ".died", "w").close()
        for child in psutil.Process().children(recursive=True):
            if "server-filesystem" in " ".join(child.cmdline()):
                child.send_signal(signal.SIGSTOP)
                with open(log + ".server", "a") as server:
                    server.write(f"{child.pid}\\n")
        threading.Thread(target=lambda: (time.sleep(1.5), os.kill(os.getpid(), signal.SIGKILL)), daemon=True).start()
    call = json.loads(os.environ["FILES_CALL"])
    return Choice(text="", tool_calls=(ToolCall("f1", call["name"], json.dumps(call["arguments"])),))
'''


def _setup(tmp_path: Path, call: dict) -> tuple[list[str], dict[str, str]]:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "notes.txt").write_text("buy tea")
    (tmp_path / "files_flow.py").write_text(FLOW)
    (tmp_path / "files_model.py").write_text(MODEL)
    config = {"mcpServers": {"files": {"command": filesystem(), "args": [str(folder)]}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    env = {**os.environ, "FILES_LOG": str(tmp_path / "log"), "FILES_CALL": json.dumps(call), "COLUMNS": "1000",
           "STATEBOUND_CONFIG": str(tmp_path / "none.toml"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-c", "from statebound.cli import main; main()", "run", f"{tmp_path / 'files_flow.py'}:flow",
               "-m", "function:files_model:respond", "--model-option", "tools=true", "--mcp-config",
               str(tmp_path / "mcp.json"), "--store", str(tmp_path / "s.db"), "--thread", "t"]
    return command, env


def _let_go(tmp_path: Path) -> None:
    """Let the held server go on; it reads the call, then its closed stdin, and ends."""
    import psutil

    pids = [int(line) for line in (tmp_path / "log.server").read_text().split()]
    assert pids, "the model found no filesystem server to hold"
    for pid in pids:
        os.kill(pid, signal.SIGCONT)
    deadline = time.monotonic() + 20
    while any(psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE for pid in pids):
        assert time.monotonic() < deadline, "the orphaned MCP server did not end"
        time.sleep(0.1)


def _run(command: list[str], env: dict[str, str], *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*command, *more], env=env, capture_output=True, text=True, timeout=180)


def test_kill_9_inside_a_destructive_mcp_tool_asks_and_skip_goes_on(tmp_path):
    folder = tmp_path / "files"
    command, env = _setup(tmp_path, {"name": "write_file",
                                     "arguments": {"path": str(folder / "notes.txt"), "content": "buy coffee"}})
    assert _run(command, env, "--task", "write").returncode == -9  # killed inside write_file
    _let_go(tmp_path)
    asked = _run(command, env, "--resume")
    assert asked.returncode == 3, asked.stdout + asked.stderr
    assert "tool 'write_file' was interrupted while it ran and is not safe to run twice" in asked.stdout
    done = _run(command, env, "--resume", "--input", "skip")
    assert done.returncode == 0, done.stdout + done.stderr
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        history = [entry for point in store.checkpoints("t") for entry in point.added]
    skipped = [entry for entry in history if entry.source == "tool"]
    assert [(entry.name, entry.ok) for entry in skipped] == [("write_file", False)]
    assert "write_file was interrupted and not run again" in skipped[0].content
    assert (tmp_path / "log.asked").read_text().split() == ["user", "tool"]  # each reply asked for once


def test_kill_9_inside_a_read_only_mcp_tool_runs_it_again_without_asking(tmp_path):
    folder = tmp_path / "files"
    command, env = _setup(tmp_path, {"name": "read_text_file", "arguments": {"path": str(folder / "notes.txt")}})
    assert _run(command, env, "--task", "read").returncode == -9  # killed inside read_text_file
    _let_go(tmp_path)
    done = _run(command, env, "--resume")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "interrupted" not in done.stdout and "buy tea" in done.stdout
    assert (tmp_path / "log.asked").read_text().split() == ["user", "tool"]
