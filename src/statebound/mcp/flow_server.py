"""Flows as MCP tools: ``statebound mcp FILE.py:flow`` (stdio) and :func:`http_app` (streamable
HTTP, an ASGI app to serve or mount at ``/mcp``).

Each flow is a tool named after it. Its input is ``task`` (the flow's task), ``vars`` (the flow
variables to start from, when it declares some), and, to go on with a stored run, ``thread`` and
``input`` (the answer to the question the thread waits on). Its output is the run's result as
structured content: ``status`` (the exit reason), ``exit_state``, ``thread``, ``last`` (the last
message), ``vars``, ``question`` (when paused), ``trajectory`` and ``error``. Every run is a
thread of the checkpoint store, so a paused or crashed run goes on from where it stood.

A run that pauses for a person asks the client, as the client can be asked: a 2026-07-28 client
gets an ``input_required`` result (its answer comes back with the retried call); a 2025 client
that takes elicitations is sent one during the call; any other client gets the paused result,
whose ``thread`` and ``question`` it answers by calling the tool again with ``thread`` and
``input`` (a continuation). A client that asks for progress is told each state the run enters.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from statebound.errors import CheckpointError, DefinitionError
from statebound.flow.events import StateEntered
from statebound.flow.result import ExitReason, RunResult

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server import Server
    from starlette.applications import Starlette

    from statebound.flow.listeners import Event
    from statebound.flow.live import Checkpointer
    from statebound.flow.model import Flow
    from statebound.llm.base import LLM

__all__ = ["FlowTools", "flow_server", "http_app", "serve_stdio"]

_ANSWER = "answer"  # the key of the one input request a paused run makes


class FlowTools:
    """The MCP tools of ``flows``, their runs stored as threads of ``store`` and run with ``llm``."""

    def __init__(self, flows: Sequence[Flow], *, store: Checkpointer, llm: LLM | None = None) -> None:
        self.flows = {flow.name: flow for flow in flows}
        if len(self.flows) != len(flows):
            raise DefinitionError("two flows have one name: an MCP client calls them by name")
        self.store = store
        self.llm = llm

    def tool(self, flow: Flow) -> types.Tool:
        """The flow as a tool: its input and output schemas."""
        import mcp_types as types

        inputs: dict[str, Any] = {
            "task": {"type": "string", "description": "The task the flow solves (a new run)."},
            "thread": {"type": "string", "description": "The stored run to go on with (or the name of a new one)."},
            "input": {"type": "string", "description": "With thread: the answer to the question it waits on."},
        }
        if flow.vars is not None:
            schema = {key: value for key, value in flow.vars.schema().items() if key != "required"}
            inputs["vars"] = {**schema, "description": "The flow variables to start from (fields left out keep "
                                                      "their defaults)."}
        finals = [state.name for state in flow.states if state.final]
        description = (f"Run the statebound flow {flow.name!r}: it starts in {flow.initial} and ends in "
                       f"{', '.join(finals)}. Give a task; a run that pauses asks a question, answered with "
                       "thread and input.")
        return types.Tool(name=flow.name, description=description,
                          input_schema={"type": "object", "properties": inputs},
                          output_schema=_OUTPUT_SCHEMA,
                          annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                                            idempotent_hint=False, open_world_hint=True))

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        import mcp_types as types

        return types.ListToolsResult(tools=[self.tool(flow) for flow in self.flows.values()])

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams
                        ) -> types.CallToolResult | types.InputRequiredResult:
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        flow = self.flows.get(params.name)
        if flow is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}; the tools are "
                                                 f"{', '.join(self.flows)}")
        arguments = dict(params.arguments or {})
        thread = params.request_state or arguments.get("thread")
        answer = _answered(params.input_responses) if params.request_state else arguments.get("input")
        progress = _Progress(ctx)  # one count for the whole call, across the answers given in it
        try:
            result, thread = await self._run(flow, arguments, thread, answer, progress)
            while result.exit_reason is ExitReason.PAUSED and _can_elicit(ctx):
                asked = await ctx.session.elicit_form(result.pending or "", _answer_schema(result.pending or ""),
                                                      related_request_id=ctx.request_id)
                if asked.action != "accept" or not asked.content:
                    break
                result, thread = await self._run(flow, {}, thread, str(asked.content.get(_ANSWER, "")), progress)
        except (DefinitionError, CheckpointError) as error:
            return types.CallToolResult(content=[types.TextContent(text=f"Error: {error}")], is_error=True)
        if result.exit_reason is ExitReason.PAUSED and _modern(ctx):
            request = types.ElicitRequest(params=types.ElicitRequestFormParams(
                message=result.pending or "", requested_schema=_answer_schema(result.pending or "")))
            return types.InputRequiredResult(input_requests={_ANSWER: request}, request_state=thread)
        outcome = _outcome(flow, result, thread)
        return types.CallToolResult(content=[types.TextContent(text=json.dumps(outcome, ensure_ascii=False))],
                                    structured_content=outcome, is_error=result.exit_reason is ExitReason.ERROR)

    async def _run(self, flow: Flow, arguments: Mapping[str, Any], thread: str | None, answer: str | None,
                   progress: _Progress) -> tuple[RunResult, str]:
        """Start a run (a new thread) or go on with a stored one; the result and the thread."""
        if thread is not None and self.store.record(thread) is not None:
            result = await flow.resume(thread, checkpointer=self.store, input=answer, llm=self.llm,
                                       on_event=progress, record_events=False)
            return result, thread
        task = arguments.get("task")
        if not isinstance(task, str) or not task.strip():
            known = f"; the store has no thread {thread!r}" if thread is not None else ""
            raise DefinitionError(f"give the task (a string) to start a run of {flow.name!r}{known}")
        if answer is not None:
            raise DefinitionError("input answers a stored thread's question: give the thread it answers")
        if isinstance(arguments.get("vars"), dict) and flow.vars is not None:
            given = arguments["vars"]
            flow = flow.replace(vars=flow.vars.load({**flow.vars.initial_data, **given}))
        thread = thread or f"mcp-{uuid.uuid4().hex[:12]}"
        result = await flow.run(task, llm=self.llm, checkpointer=self.store, thread=thread, on_event=progress,
                                record_events=False)
        return result, thread


class _Progress:
    """Tells the client (when it asked for progress) each state the run enters."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.count = 0

    async def __call__(self, event: Event) -> None:
        if isinstance(event, StateEntered):
            self.count += 1
            await self.ctx.session.report_progress(self.count, None, f"entered {event.state} (turn {event.turn})")


def _outcome(flow: Flow, result: RunResult, thread: str) -> dict[str, Any]:
    last = result.history[-1].content if result.history else ""
    values = None if flow.vars is None or result.vars is None else flow.vars.dump(result.vars)
    return {"status": result.exit_reason.value, "flow": flow.name, "thread": thread, "exit_state": result.exit_state,
            "last": last, "vars": values, "question": result.pending, "trajectory": list(result.trajectory),
            "error": None if result.error is None else f"{type(result.error).__name__}: {result.error}"}


_OUTPUT_SCHEMA: dict[str, Any] = {"type": "object", "required": ["status", "flow", "thread", "exit_state", "last"],
                                  "properties": {
                                      "status": {"type": "string", "description": "How the run ended: final, paused, "
                                                 "error, turn_limit, visit_limit, budget, context."},
                                      "flow": {"type": "string"},
                                      "thread": {"type": "string", "description": "The stored run."},
                                      "exit_state": {"type": "string"},
                                      "last": {"type": "string", "description": "The run's last message."},
                                      "vars": {"type": ["object", "null"]},
                                      "question": {"type": ["string", "null"], "description": "What a paused run asks."},
                                      "trajectory": {"type": "array", "items": {"type": "string"}},
                                      "error": {"type": ["string", "null"]}}}


def _answer_schema(question: str) -> dict[str, Any]:
    return {"type": "object", "properties": {_ANSWER: {"type": "string", "description": question}},
            "required": [_ANSWER]}


def _answered(responses: Mapping[str, Any] | None) -> str | None:
    """The person's answer in a retried call's input responses (``decline``/``cancel`` as said)."""
    response = (responses or {}).get(_ANSWER)
    if response is None:
        return None
    if getattr(response, "action", "accept") != "accept":
        return str(response.action)
    return str((getattr(response, "content", None) or {}).get(_ANSWER, ""))


def _modern(ctx: Any) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _can_elicit(ctx: Any) -> bool:
    """A 2025 client that takes elicitations, on a connection that can send it one."""
    capabilities = ctx.session.client_capabilities
    return (not _modern(ctx) and capabilities is not None and capabilities.elicitation is not None
            and ctx.session.can_send_request)


def flow_server(flows: Sequence[Flow], store: Checkpointer, *, llm: LLM | None = None,
                name: str = "statebound") -> Server:
    """An MCP server (the SDK's low-level ``Server``) whose tools are ``flows``."""
    from importlib.metadata import version

    from mcp.server import Server
    from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

    tools = FlowTools(flows, store=store, llm=llm)
    server: Server = Server(name, version=version("statebound"), on_list_tools=tools.list_tools,
                            on_call_tool=tools.call_tool)  # type: ignore[arg-type]
    # a modern client echoes request_state (the paused thread): sealed, so it cannot name another
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=name))
    return server


def http_app(flows: Sequence[Flow], store: Checkpointer, *, llm: LLM | None = None, path: str = "/mcp") -> Starlette:
    """The flows' MCP server over streamable HTTP, as an ASGI app serving ``path``; requests whose
    Host or Origin is not this machine are refused (DNS-rebinding protection). Its lifespan runs
    the SDK's session manager: an app that mounts it must enter that lifespan in its own
    (``app.router.lifespan_context(app)``), since a mounted app's lifespan is not run for it."""
    return flow_server(flows, store, llm=llm).streamable_http_app(streamable_http_path=path, host="127.0.0.1")


async def serve_stdio(flows: Sequence[Flow], store: Checkpointer, *, llm: LLM | None = None) -> None:
    """Serve the flows over this process's stdin and stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    server = flow_server(flows, store, llm=llm)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
