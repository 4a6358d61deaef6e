"""An MCP server (the SDK's) whose one tool floods the client with notifications before it answers."""
import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("noisy")


@server.tool()
async def noisy(ctx: Context) -> str:
    """Send many notifications, then answer."""
    session = ctx.request_context.session
    for i in range(int(sys.argv[1])):
        await session.send_log_message(level="info", data=f"note {i}", logger="noisy", related_request_id=ctx.request_id)
        await session.send_tool_list_changed()
    return "quiet now"


server.run()
