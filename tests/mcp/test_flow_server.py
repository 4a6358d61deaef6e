"""Flows as MCP tools (``statebound mcp FLOW``), driven over stdio by the official ``mcp`` Python
client as clients of each kind use it: a 2026-07-28 client answers a paused run's
``input_required``, a 2025 client that takes elicitations is asked during the call, one that does
not gets the paused result and goes on with ``thread`` and ``input``; progress names each state
entered; the run's result is structured content matching the tool's output schema. Over
streamable HTTP by the same client and by the inspector CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp_helpers import NODE_BIN, ROOT, installed

from statebound.flow.live import SQLiteCheckpointer

pytestmark = pytest.mark.integration
HERE = Path(__file__).parent
FLOW = f"{HERE / 'greet_flow.py'}:flow"


def serving(store: Path, *more: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-c", "from statebound.cli import main; main()", "mcp",
                                                               FLOW, "--store", str(store), "-m", "scripted", *more],
                                 env={"PYTHONPATH": str(ROOT / "src"), "STATEBOUND_CONFIG": str(store.with_suffix(".toml"))})


async def _call(server: StdioServerParameters, mode: str, answer: str | None) -> tuple[list[str], list[str], object]:
    """Call the greet tool once (answering an elicitation with ``answer``, when given); what was
    asked, the progress messages and the result."""
    asked: list[str] = []
    progress: list[str] = []

    async def elicit(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": answer or ""})

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async with Client(server, mode=mode, elicitation_callback=elicit if answer is not None else None) as client:
        listing = await client.list_tools()
        tool = listing.tools[0]
        result = await client.call_tool("greet", {"task": "greet someone", "vars": {"name": "Ann", "times": 2}},
                                        progress_callback=on_progress)
        if result.structured_content is not None:
            jsonschema.validate(result.structured_content, tool.output_schema)
        assert tool.name == "greet" and set(tool.input_schema["properties"]) == {"task", "thread", "input", "vars"}
        if result.structured_content and result.structured_content["status"] == "paused":
            thread = result.structured_content["thread"]
            result = await client.call_tool("greet", {"thread": thread, "input": "yes"})
        return asked, progress, result


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_client_that_can_be_asked_answers_the_pause_within_the_call(tmp_path, mode):
    asked, progress, result = asyncio.run(_call(serving(tmp_path / "s.db"), mode, "yes"))
    assert asked == ["Greet Ann 2 times?"]
    assert result.structured_content["status"] == "final"
    assert result.structured_content["last"] == "Hello Ann! Hello Ann!"
    assert result.structured_content["vars"] == {"name": "Ann", "times": 2}
    assert progress == ["entered Ask (turn 0)", "entered Greet (turn 1)", "entered Done (turn 2)"]
    thread = result.structured_content["thread"]
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        assert [(info.thread, info.status) for info in store.threads()] == [(thread, "final")]


def test_a_client_that_takes_no_elicitation_gets_a_continuation(tmp_path):
    asked, progress, result = asyncio.run(_call(serving(tmp_path / "s.db"), "legacy", None))
    assert asked == [] and progress == ["entered Ask (turn 0)"]  # the first call paused
    outcome = result.structured_content
    assert (outcome["status"], outcome["trajectory"]) == ("final", ["Ask", "Greet", "Done"])


def test_bad_calls_are_errors_the_client_reads(tmp_path):
    async def calls() -> list[object]:
        async with Client(serving(tmp_path / "s.db"), mode="legacy") as client:
            found = [await client.call_tool("greet", {}), await client.call_tool("greet", {"thread": "nope", "input": "x"})]
            try:
                await client.call_tool("wave", {"task": "x"})
            except Exception as error:  # noqa: BLE001 - the protocol error the client raises
                found.append(str(error))
            return found

    no_task, no_thread, unknown = asyncio.run(calls())
    assert no_task.is_error and "give the task (a string) to start a run of 'greet'" in no_task.content[0].text
    assert no_thread.is_error and "the store has no thread 'nope'" in no_thread.content[0].text
    assert "Unknown tool: wave; the tools are greet" in unknown


@pytest.mark.slow
def test_the_inspector_cli_lists_and_calls_the_flow_over_stdio(tmp_path):
    inspector = installed(NODE_BIN.parent / "@modelcontextprotocol" / "inspector-cli" / "build" / "index.js",
                          "@modelcontextprotocol/inspector-cli")
    work = NODE_BIN.parent.parent / "work"  # the inspector runs from a folder whose parent has a package.json
    work.mkdir(exist_ok=True)
    server = [sys.executable, "-c", "from statebound.cli import main; main()", "mcp", FLOW, "--store",
              str(tmp_path / "s.db"), "-m", "scripted"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}

    def inspect(*method: str) -> dict:
        done = subprocess.run([str(NODE_BIN / "node"), inspector, *server, *method], cwd=work, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    listed = inspect("--method", "tools/list")
    assert [tool["name"] for tool in listed["tools"]] == ["greet"]
    called = inspect("--method", "tools/call", "--tool-name", "greet", "--tool-arg", "task=greet someone")
    assert called["structuredContent"]["status"] == "paused"
    assert called["structuredContent"]["question"] == "Greet world 1 times?"


def test_over_streamable_http_a_2026_client_answers_input_required(flow_server):
    async def call() -> tuple[str, list[str], object]:
        asked: list[str] = []

        async def elicit(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
            asked.append(params.message)
            return types.ElicitResult(action="accept", content={"answer": "no"})

        async with Client(flow_server, mode="auto", elicitation_callback=elicit) as client:
            result = await client.call_tool("greet", {"task": "greet", "vars": {"name": "Bo"}})
            return client.protocol_version, asked, result

    version, asked, result = asyncio.run(call())
    assert version == "2026-07-28" and asked == ["Greet Bo 1 times?"]
    assert (result.structured_content["status"], result.structured_content["exit_state"]) == ("final", "Skip")
