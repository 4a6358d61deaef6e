"""statebound's MCP client against real servers no one here wrote (installed by
scripts/setup_mcp.sh): the reference "everything" and filesystem servers (Node, protocol
2025-11-25) and mcp-server-time and mcp-server-git (Python, protocol 2026-07-28). Each is listed
and called from a flow; a server killed or hung mid-call, one that does not start, a URL that does
not answer, a tool it does not list, arguments that misfit and a result over the bound are each a
named error or a failed call, never a hang and never a leftover process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

import pytest
from mcp_helpers import everything, filesystem, git_server, server_processes, time_server
from processes import free_port
from pydantic import BaseModel

from statebound import CallLLM, Flow, Instruction, State, always
from statebound.errors import DefinitionError, MCPServerError
from statebound.flow import CallTool, ExitReason, tool_failed, tool_ok
from statebound.llm.base import Capabilities, Choice, Request, ToolCall
from statebound.llm.testing import FunctionLLM
from statebound.mcp import Connection, MCPServer, mcp, mcp_tool

pytestmark = pytest.mark.integration
TOOLS = Capabilities(chat=True, tools=True)


def one_call(server_tool, args, *, vars=None) -> Flow:  # noqa: A002
    """A flow that calls one tool with ``args`` and ends (Ok or Failed by the call's result)."""
    return Flow(name="call", initial="Call", vars=vars, states=[
        State("Call", outputs=[CallTool(server_tool, args=args)],
              transitions=[(tool_ok(), "Ok"), (tool_failed(), "Failed")]),
        State("Ok", final=True), State("Failed", final=True)])


def caller(*calls: ToolCall, offered: list[list[str]] | None = None) -> FunctionLLM:
    """A model that asks for ``calls`` first, then says it is done; notes the tools it was offered."""

    def respond(request: Request) -> Choice:
        if offered is not None:
            offered.append([spec.name for spec in request.tools])
        if request.messages[-1].role == "tool":
            return Choice(text="done")
        return Choice(text="", tool_calls=calls)

    return FunctionLLM(respond=respond, capabilities=TOOLS)


def offering(*toolsets: object) -> Flow:
    return Flow(name="offer", initial="Act", states=[
        State("Act", outputs=[Instruction("Go."), CallLLM(tools=list(toolsets))], transitions=[(always(), "End")]),
        State("End", final=True)])


def test_servers_of_both_protocol_eras_are_listed_and_called_by_the_model():
    clock = MCPServer.stdio("time", time_server())
    reference = MCPServer.stdio("everything", everything(), "stdio")
    offered: list[list[str]] = []
    llm = caller(ToolCall("c1", "get_current_time", '{"timezone": "Asia/Tokyo"}'),
                 ToolCall("c2", "echo", '{"message": "hello"}'), offered=offered)
    result = offering(mcp(clock), mcp(reference, "echo")).run_sync("x", llm=llm)
    assert result.exit_reason is ExitReason.FINAL, result.error
    assert offered[0] == ["get_current_time", "convert_time", "echo"]
    now, echo = result.history[-2:]
    assert (now.ok, now.data["data"]["mcp"]) == (True, {"server": "time", "tool": "get_current_time"})
    assert now.data["data"]["structured"]["timezone"] == "Asia/Tokyo"
    assert (echo.content, echo.ok) == ("Echo: hello", True)
    assert not server_processes("mcp-server-time") and not server_processes("server-everything")

    async def eras() -> list[str | None]:
        found = []
        for server in (clock, reference):
            async with Connection(server) as connection:
                await connection.tools()
                found.append(connection.protocol_version)
        return found

    import asyncio

    assert asyncio.run(eras()) == ["2026-07-28", "2025-11-25"]


class Now(BaseModel):
    timezone: str
    datetime: str
    day_of_week: str
    is_dst: bool


@dataclass(frozen=True)
class Clock:
    now: Now | None = None


def test_structured_content_is_data_and_into_writes_it_typed():
    clock = MCPServer.stdio("time", time_server())
    result = one_call(mcp_tool(clock, "get_current_time", into="now"), {"timezone": "UTC"}, vars=Clock).run_sync("x")
    assert result.exit_state == "Ok", result.history[-1].content
    assert isinstance(result.vars.now, Now) and result.vars.now.timezone == "UTC"
    assert json.loads(result.history[-1].content)["timezone"] == "UTC"


def test_images_resource_links_and_embedded_resources_are_references():
    reference = MCPServer.stdio("everything", everything(), "stdio")
    llm = caller(ToolCall("c1", "get-tiny-image", "{}"), ToolCall("c2", "get-resource-links", '{"count": 2}'),
                 ToolCall("c3", "get-resource-reference", '{"resourceType": "Text", "resourceId": 1}'))
    result = offering(mcp(reference)).run_sync("x", llm=llm)
    image, links, embedded = result.history[-3:]
    assert "[image image/png, " in image.content and "bytes, sha256 " in image.content
    picture = image.data["data"]["content"][0]
    assert picture["type"] == "image" and picture["bytes"] > 100 and len(picture["sha256"]) == 64
    assert "base64" not in json.dumps(image.data)  # never the bytes themselves
    kinds = [ref["type"] for ref in links.data["data"]["content"]]
    assert kinds == ["resource_link", "resource_link"] and links.content.count("[resource ") == 2
    assert embedded.ok and "[resource " in embedded.content, embedded.content


def test_a_server_killed_mid_call_is_a_failed_call_with_its_stderr_and_leaves_no_process():
    reference = MCPServer.stdio("everything", everything(), "stdio")
    flow = one_call(mcp_tool(reference, "trigger-long-running-operation"), {"duration": 30, "steps": 30})

    def kill_the_server() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            pids = server_processes("server-everything")
            if pids:
                time.sleep(1.5)  # the call is under way
                for pid in pids:
                    os.kill(pid, signal.SIGKILL)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_the_server)
    killer.start()
    started = time.monotonic()
    result = flow.run_sync("x")
    killer.join()
    failed = result.history[-1]
    assert result.exit_state == "Failed" and time.monotonic() - started < 20
    assert "MCP server 'everything': the connection closed during trigger-long-running-operation" in failed.content
    assert "Starting default (STDIO) server" in failed.content  # its stderr's end
    assert failed.data["mcp"]["error"] == "MCPServerError"
    assert not server_processes("server-everything")


def test_a_hung_server_times_out_is_stopped_and_the_next_call_starts_it_again():
    reference = MCPServer.stdio("everything", everything(), "stdio", timeout=1.5)
    flow = Flow(name="hung", initial="Wait", states=[
        State("Wait", outputs=[CallTool(mcp_tool(reference, "trigger-long-running-operation"),
                                        args={"duration": 60, "steps": 2})],
              transitions=[(tool_failed(), "Again"), (always(), "End")]),
        State("Again", outputs=[CallTool(mcp_tool(reference, "echo"), args={"message": "back"})],
              transitions=[(always(), "End")]),
        State("End", final=True)])
    started = time.monotonic()
    result = flow.run_sync("x")
    assert time.monotonic() - started < 30
    hung, again = result.history[-2:]
    assert "did not answer within 1.5 s, so the server was stopped" in hung.content
    assert hung.data["mcp"]["error"] == "MCPServerTimeout"
    assert (again.content, again.ok) == ("Echo: back", True)
    assert not server_processes("server-everything")


def test_a_command_that_does_not_start_or_exits_at_once_and_a_url_that_does_not_answer_are_named_errors(python):
    missing = one_call(mcp_tool(MCPServer.stdio("ghost", "/no/such/server"), "x"), {}).run_sync("x")
    assert missing.exit_reason is ExitReason.ERROR and isinstance(missing.error, MCPServerError)
    assert "MCP server 'ghost': could not be started: no such command: /no/such/server" in str(missing.error)

    dying = MCPServer.stdio("dying", python, "-c", "import sys; sys.stderr.write('no database at /srv/db\\n'); sys.exit(3)",
                            startup_timeout=20)
    died = one_call(mcp_tool(dying, "x"), {}).run_sync("x")
    assert isinstance(died.error, MCPServerError) and "could not be started" in str(died.error)
    assert died.error.stderr == "no database at /srv/db"

    nobody = MCPServer.http("nobody", f"http://127.0.0.1:{free_port()}/mcp", startup_timeout=10)
    started = time.monotonic()
    unanswered = one_call(mcp_tool(nobody, "x"), {}).run_sync("x")
    assert isinstance(unanswered.error, MCPServerError) and time.monotonic() - started < 15
    assert "MCP server 'nobody'" in str(unanswered.error)


def test_allow_list_unknown_tools_misfits_and_the_result_bound(tmp_path):
    (tmp_path / "notes.txt").write_text("x" * 5000)
    files = MCPServer.stdio("files", filesystem(), str(tmp_path), allow=("read_text_file", "list_directory"),
                            max_result_chars=100)
    offered: list[list[str]] = []
    llm = caller(ToolCall("c1", "read_text_file", json.dumps({"path": str(tmp_path / "notes.txt")})),
                 ToolCall("c2", "list_directory", '{"folder": "."}'),
                 ToolCall("c3", "write_file", "{}"), offered=offered)
    result = offering(mcp(files)).run_sync("x", llm=llm)
    assert offered[0] == ["read_text_file", "list_directory"]  # the others are never offered
    read, misfit, unlisted = result.history[-3:]
    assert read.content.endswith("[cut: the result had 5000 characters; MCP server 'files' keeps 100 (max_result_chars)]")
    assert read.content.startswith("x" * 100) and read.data["data"]["mcp"]["cut"] == 5000
    assert misfit.ok is False and "does not fit its parameters: arguments: 'path' is a required property" in misfit.content
    assert unlisted.ok is False and "there is no function 'write_file'" in unlisted.content

    refused = one_call(mcp_tool(files, "write_file"), {}).run_sync("x")
    assert isinstance(refused.error, DefinitionError)
    assert "MCP server 'files' has no tool 'write_file' (its allow list leaves it out)" in str(refused.error)
    unknown = one_call(mcp_tool(files, "nope"), {}).run_sync("x")
    assert "has no tool 'nope'; it offers read_text_file, list_directory" in str(unknown.error)


def test_secrets_in_env_are_masked_in_results_and_never_shown():
    token = "sk-test-0123456789abcdefghij"
    reference = MCPServer.stdio("everything", everything(), "stdio", env={"TICKETS_TOKEN": token})
    assert token not in repr(reference)
    result = one_call(mcp_tool(reference, "get-env"), {}).run_sync("x")
    shown = result.history[-1]
    assert "TICKETS_TOKEN" in shown.content and token not in shown.content and "***" in shown.content
    assert token not in json.dumps(shown.data)


def test_the_git_server_over_a_sample_repository(tmp_path):
    repository = tmp_path / "repo"
    repository.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "Ann", "GIT_AUTHOR_EMAIL": "ann@example.org",
           "GIT_COMMITTER_NAME": "Ann", "GIT_COMMITTER_EMAIL": "ann@example.org"}
    for command in (["git", "init", "-q"], ["git", "commit", "-q", "--allow-empty", "-m", "First light"]):
        subprocess.run(command, cwd=repository, env=env, check=True, timeout=30)
    git = MCPServer.stdio("git", git_server(), "--repository", str(repository))
    result = one_call(mcp_tool(git, "git_log"), {"repo_path": str(repository)}).run_sync("x")
    assert result.exit_state == "Ok" and "First light" in result.history[-1].content


def test_a_servers_elicitation_pauses_the_run_and_the_answer_goes_to_the_server(tmp_path):
    from statebound.flow.live import SQLiteCheckpointer

    reference = MCPServer.stdio("everything", everything(), "stdio")
    flow = one_call(mcp_tool(reference, "trigger-elicitation-request"), {})
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        paused = flow.run_sync("x", checkpointer=store, thread="t")
        assert paused.exit_reason is ExitReason.PAUSED
        assert paused.pending.startswith("MCP server 'everything' asks, during trigger-elicitation-request: ")
        assert "integer: an integer, default 42" in paused.pending
        again = flow.resume_sync("t", checkpointer=store, input='{"integer": "many"}')
        assert again.exit_reason is ExitReason.PAUSED  # asked again, saying what was wrong
        assert "[\'{\"integer\": \"many\"}\' was not understood: integer: 'many' is not an integer]" in again.pending
        done = flow.resume_sync("t", checkpointer=store, input='{"name": "Ann", "integer": 7}')
    assert done.exit_state == "Ok", done.history[-1].content
    sent = done.history[-1].content
    assert '"action": "accept"' in sent and '"name": "Ann"' in sent and '"integer": 7' in sent
    assert '"number": 3.14' in sent  # a field left out takes the form's default
    assert not server_processes("server-everything")


def test_a_server_that_floods_notifications_is_answered_not_hung(python):
    from pathlib import Path

    noisy = MCPServer.stdio("noisy", python, str(Path(__file__).with_name("noisy_server.py")), "20000", timeout=60)
    started = time.monotonic()
    result = one_call(mcp_tool(noisy, "noisy"), {}).run_sync("x")
    assert result.exit_state == "Ok" and result.history[-1].content == "quiet now"
    assert time.monotonic() - started < 60 and not server_processes("noisy_server")


def test_every_mcp_call_is_a_span_naming_the_server():
    pytest.importorskip("opentelemetry.sdk", reason="tracing needs the otel extra: pip install 'statebound[otel]'")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from statebound import telemetry

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry.enable(provider)
    try:
        reference = MCPServer.stdio("everything", everything(), "stdio")
        llm = caller(ToolCall("c1", "echo", '{"message": "traced"}'), ToolCall("c2", "echo", "{}"))
        offering(mcp(reference, "echo")).run_sync("x", llm=llm)
        direct = one_call(mcp_tool(reference, "get-sum"), {"a": 1, "b": 2}).run_sync("x")
    finally:
        telemetry.disable()
    assert direct.exit_state == "Ok"
    tools = [span for span in exporter.get_finished_spans() if span.name.startswith("execute_tool")]
    assert [(span.name, span.attributes["statebound.tool.ok"]) for span in tools] == [
        ("execute_tool echo", True), ("execute_tool echo", False), ("execute_tool get-sum", True)]
    called = [span for span in tools if span.attributes.get("mcp.method.name") == "tools/call"]
    assert len(called) == 2 and all(span.attributes["statebound.mcp.server"] == "everything" for span in called)
