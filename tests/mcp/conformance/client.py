"""The MCP conformance suite's client under test (``conformance client --command "python THIS"``):
statebound's MCP client, as a flow uses it. It lists the tools of the server at the URL the suite
appends and calls each from a flow (``CallTool(mcp_tool(...), args=...)``) with arguments made
from its schema; a server's elicitation is answered with ``{}``, accepting the form's defaults, as
a person answering the flow's pause with ``{}`` would."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from statebound import Flow, State, always
from statebound.flow import CallTool
from statebound.mcp import Connection, MCPServer, mcp_tool

SAMPLES = {"number": 2, "integer": 3, "string": "statebound", "boolean": True, "array": [], "object": {}}


def sample(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool: each property's default, else a value of its type."""
    properties = schema.get("properties") or {}
    return {name: spec.get("default", SAMPLES.get(spec.get("type", "string"), "statebound"))
            for name, spec in properties.items()}


async def main(url: str) -> None:
    server = MCPServer.http("conformance", url, timeout=20, startup_timeout=20)
    async with Connection(server) as connection:
        tools = await connection.tools()
    for listed in tools:
        call = CallTool(mcp_tool(server, listed.name, answers=lambda question: "{}"), args=sample(listed.input_schema or {}))
        flow = Flow(name="conformance", initial="Call", states=[
            State("Call", outputs=[call], transitions=[(always(), "End")]), State("End", final=True)])
        result = await flow.run("call every tool")
        print(listed.name, result.exit_reason.value, result.history[-1].ok, result.history[-1].content[:200])


if __name__ == "__main__":
    asyncio.run(main(sys.argv[-1]))
