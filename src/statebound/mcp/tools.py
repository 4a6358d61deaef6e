"""An MCP server's tools in a flow: ``CallLLM(tools=[mcp("filesystem")])`` offers them to the
model (all, or a named subset), ``CallTool(mcp_tool("filesystem", "read_text_file"), args=...)``
calls one directly.

A server is named by an :class:`~statebound.mcp.servers.MCPServer` or by its name, looked up when
the run needs it among the servers in use (:func:`use_servers`, ``statebound run --mcp-config``).
Each run connects to a server once, when an output first needs it, lists its tools once and
leaves the connection (ending a stdio server's process) when the run ends. A tool's schema is the
server's; its annotations say whether a call may run twice (read-only, or idempotent and not
destructive: yes; otherwise a call cut off by a crash asks a person to repeat or skip it). A
server's elicitation during a call pauses the run with its question; the answer resumes the run
and the call is made again, the answer given to the server.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from statebound.errors import DefinitionError, MCPServerError
from statebound.flow.context import PauseRun, RunContext
from statebound.flow.tool_result import ToolResult
from statebound.llm.base import ToolSpec
from statebound.mcp.connection import Connection
from statebound.mcp.elicitation import answer, question
from statebound.mcp.results import tool_result
from statebound.mcp.servers import MCPServer, allowed

if TYPE_CHECKING:
    import mcp_types as types

__all__ = ["MCPTool", "ServerTools", "mcp", "mcp_tool", "repeatable", "servers_in_use", "use_servers"]

# answers a server's question without pausing the run (None: pause and ask a person)
Answerer = Callable[[str], "str | None"]

_IN_USE: ContextVar[Mapping[str, MCPServer] | None] = ContextVar("statebound_mcp_servers", default=None)


@contextlib.contextmanager
def use_servers(servers: Mapping[str, MCPServer] | Sequence[MCPServer]) -> Iterator[Mapping[str, MCPServer]]:
    """Make ``servers`` the ones ``mcp("name")`` finds, for the runs started inside (``with``)."""
    named = dict(servers) if isinstance(servers, Mapping) else {server.name: server for server in servers}
    token = _IN_USE.set({**servers_in_use(), **named})
    try:
        yield named
    finally:
        _IN_USE.reset(token)


def servers_in_use() -> Mapping[str, MCPServer]:
    """The servers :func:`use_servers` made available here."""
    return _IN_USE.get() or {}


def repeatable(annotations: types.ToolAnnotations | None) -> bool:
    """Whether a call may run twice, by the tool's annotations: read-only, or idempotent and not
    destructive (no annotation at all: not repeatable)."""
    if annotations is None:
        return False
    if annotations.read_only_hint:
        return True
    return bool(annotations.idempotent_hint) and annotations.destructive_hint is False


class MCPTool:
    """One tool of an MCP server (a :class:`~statebound.flow.tool_calls.ModelTool`): its spec from
    the server's listing, its arguments checked against the listed schema, each call a call on
    the run's connection to the server."""

    __slots__ = ("_check", "answers", "connection", "into", "listed", "repeatable", "spec", "writes")

    def __init__(self, connection: Connection, listed: types.Tool, *, into: str | None = None,
                 answers: Answerer | None = None) -> None:
        from jsonschema.validators import validator_for

        self.connection = connection
        self.listed = listed
        schema = dict(listed.input_schema or {"type": "object"})
        description = listed.description or listed.title or ""
        self.spec = ToolSpec(listed.name, description, schema)
        self.repeatable = repeatable(listed.annotations)
        self.into = into
        self.writes: tuple[str, ...] = () if into is None else (into,)
        self.answers = answers
        self._check = validator_for(schema)(schema)

    def __repr__(self) -> str:
        return f"MCPTool({self.connection.server.name}:{self.spec.name})"

    def arguments(self, text: str) -> dict[str, Any]:
        """The call's arguments, checked against the tool's input schema (ValueError saying what is wrong)."""
        try:
            arguments = json.loads(text or "{}")
        except json.JSONDecodeError as error:
            raise ValueError(f"the arguments are not JSON ({error.msg})") from None
        if not isinstance(arguments, dict):
            raise ValueError("the arguments are a JSON object")
        problems = [f"{'/'.join(map(str, e.absolute_path)) or 'arguments'}: {e.message}"
                    for e in list(self._check.iter_errors(arguments))[:3]]
        if problems:
            raise ValueError("; ".join(problems))
        return arguments

    async def __call__(self, ctx: RunContext, arguments: dict[str, Any]) -> ToolResult:
        from mcp.shared.exceptions import MCPError

        server, name = self.connection.server, self.spec.name
        # a person's answer to this call's question, on resume (answers by id are refused before: one question waits)
        reply, ctx.reply = (ctx.reply if isinstance(ctx.reply, str) else None), None
        asked: list[str] = []

        async def ask(params: types.ElicitRequestParams) -> types.ElicitResult:
            import mcp_types as types

            nonlocal reply
            pending = question(params)
            given = reply if reply is not None else (self.answers(pending) if self.answers is not None else None)
            reply = None
            if given is not None:
                result = answer(params, given)
                if not isinstance(result, str):
                    return result
                pending = f"{pending} [{given!r} was not understood: {result}]"
            asked.append(pending)
            return types.ElicitResult(action="cancel")

        record = {"mcp": {"server": server.name, "tool": name}}
        try:
            result = await self.connection.call(name, arguments, asker=ask)
        except MCPServerError as error:
            return ToolResult(f"Error: {error}", ok=False, data={"mcp": {**record["mcp"], "error": type(error).__name__}})
        except MCPError as error:  # the server refused the call (an unknown tool, arguments it rejects)
            return ToolResult(f"Error: {server.redact(error.message)}", ok=False,
                              data={"mcp": {**record["mcp"], "error": f"MCPError {error.code}"}})
        if asked:
            raise PauseRun(f"MCP server {server.name!r} asks, during {name}: {asked[0]}")
        return tool_result(server, name, result, into=self.into)


@dataclass(frozen=True, eq=False)
class ServerTools:
    """An MCP server's tools, as a :class:`~statebound.flow.tool_calls.Toolset`: all it lists
    (and its ``allow`` list lets through), or those named in ``only``."""

    server: MCPServer | str
    only: tuple[str, ...] | None = None
    into: str | None = None
    answers: Answerer | None = None
    label: str | None = None

    @property
    def name(self) -> str:
        return self.label or f"MCP server {self._server_name!r}"

    @property
    def writes(self) -> tuple[str, ...]:
        return () if self.into is None else (self.into,)

    @property
    def _server_name(self) -> str:
        return self.server if isinstance(self.server, str) else self.server.name

    def resolve(self) -> MCPServer:
        """The server, found by its name among those in use when it was given by name."""
        if isinstance(self.server, MCPServer):
            return self.server
        found = servers_in_use().get(self.server)
        if found is None:
            known = ", ".join(sorted(servers_in_use())) or "none"
            raise DefinitionError(f"no MCP server is named {self.server!r} (known: {known}); declare it in the "
                                  "config given to statebound run --mcp-config, or with use_servers(...) in Python")
        return found

    async def tools(self, ctx: RunContext) -> list[MCPTool]:
        server = self.resolve()
        connection = await ctx.opened(("mcp", server), lambda: Connection(server))
        key = ("tools", self.only, self.into, self.answers)
        if key not in connection.kept:
            connection.kept[key] = await self._listed(connection)
        return connection.kept[key]  # type: ignore[no-any-return]

    async def _listed(self, connection: Connection) -> list[MCPTool]:
        server = connection.server
        listing = await connection.tools()
        names = allowed(server, [tool.name for tool in listing])
        if self.only is not None:
            if unknown := [name for name in self.only if name not in names]:
                hidden = " (its allow list leaves it out)" if any(t.name == unknown[0] for t in listing) else ""
                raise DefinitionError(f"MCP server {server.name!r} has no tool {unknown[0]!r}{hidden}; it offers "
                                      f"{', '.join(names) or 'none'}")
            names = [name for name in names if name in self.only]
        by_name = {tool.name: tool for tool in listing}
        return [MCPTool(connection, by_name[name], into=self.into, answers=self.answers) for name in names]


def mcp(server: MCPServer | str, *tools: str, answers: Answerer | None = None) -> ServerTools:
    """A server's tools for ``CallLLM(tools=[...])``: all it lists, or the ``tools`` named.
    ``answers(question) -> text or None`` answers the server's questions without pausing."""
    return ServerTools(server, tuple(tools) or None, answers=answers)


def mcp_tool(server: MCPServer | str, tool: str, *, into: str | None = None,
             answers: Answerer | None = None) -> ServerTools:
    """One tool of a server, for ``CallTool(mcp_tool(...), args=...)``; ``into`` writes its
    structured content to that flow variable (converted to the variable's type)."""
    return ServerTools(server, (tool,), into=into, answers=answers, label=tool)
