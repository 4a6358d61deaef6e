"""MCP both ways: a flow uses the tools of any MCP server, and a flow is an MCP tool
(``docs/mcp.md``).

* :func:`mcp` / :func:`mcp_tool`: a server's tools offered to the model, or one called directly;
* :class:`MCPServer`, :func:`load_servers`: servers declared in Python or in the ``mcpServers``
  JSON shape MCP clients share; :func:`use_servers` makes them the ones found by name;
* :class:`~statebound.mcp.connection.Connection`: a live connection (the SDK's client in a task
  of its own; timeouts, the server's stderr in its errors, the process always ended).

Importing this package does not import the ``mcp`` SDK; connecting does (``pip install
'statebound[mcp]'``).
"""

from statebound.errors import MCPServerError, MCPServerTimeout
from statebound.mcp.connection import Connection
from statebound.mcp.servers import MCPServer, load_servers, parse_servers
from statebound.mcp.tools import MCPTool, ServerTools, mcp, mcp_tool, servers_in_use, use_servers

__all__ = ["Connection", "MCPServer", "MCPServerError", "MCPServerTimeout", "MCPTool", "ServerTools", "load_servers",
           "mcp", "mcp_tool", "parse_servers", "servers_in_use", "use_servers"]
