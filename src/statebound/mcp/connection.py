"""A live connection to one MCP server, through the official ``mcp`` SDK (both protocol eras: a
2025 server's ``initialize`` handshake, a 2026-07-28 server's ``server/discover``).

The SDK's client must be entered and left in one task, so a :class:`Connection` holds it in a
task of its own; calls come from the run's task, one at a time (a server's elicitation during a
call is answered for that call). A call that takes longer than the server's ``timeout`` stops
the server (a hung server is not waited on) and raises :class:`~statebound.errors.MCPServerTimeout`;
a server that exits or breaks the connection raises :class:`~statebound.errors.MCPServerError`
with the end of its stderr. Leaving the connection always ends the server process (the SDK
closes its stdin, then terminates and kills its process group).
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from collections.abc import Awaitable, Callable
from typing import IO, TYPE_CHECKING, Any

from statebound.errors import MCPServerError, MCPServerTimeout
from statebound.mcp.servers import MCPServer

if TYPE_CHECKING:
    import mcp_types as types
    from mcp import Client

__all__ = ["Asker", "Connection", "STDERR_TAIL"]

STDERR_TAIL = 2000  # characters of a server's stderr an error shows
_STOP_TIMEOUT = 15.0  # seconds leaving a connection may take before it is cut
_CLOSED = -32000  # the SDK's CONNECTION_CLOSED error code

# answers a server's elicitation during a call (a form's fields, or a URL to visit)
Asker = Callable[["types.ElicitRequestParams"], Awaitable["types.ElicitResult"]]


class Connection:
    """A connection to ``server``, opened by ``async with`` (or :meth:`start`) and closed, with
    the server process ended, on leaving it."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self._client: Client | None = None
        self._holder: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._failure: BaseException | None = None
        self._stderr: IO[str] | None = None
        self._lock = asyncio.Lock()
        self._asker: Asker | None = None
        self._listing: list[types.Tool] | None = None
        self.kept: dict[object, Any] = {}  # what users of the connection derive from it once (the tools as ModelTools)

    async def __aenter__(self) -> Connection:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # ---- starting and stopping -------------------------------------------------------------
    async def start(self) -> None:
        """Start the server (or connect to it) and make the protocol's handshake."""
        if self._client is not None:
            return
        self._ready.clear()
        self._stop.clear()
        self._failure = None
        self._listing = None
        self.kept.clear()
        if self.server.command is not None:
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._holder = asyncio.create_task(self._hold(), name=f"mcp server {self.server.name}")
        try:
            await asyncio.wait_for(self._ready.wait(), self.server.startup_timeout)
        except TimeoutError:
            raise await self._failed(f"did not start within {self.server.startup_timeout:g} s") from None
        if self._client is None:
            raise await self._failed(f"could not be started: {_reason(self._failure)}") from None

    async def stop(self) -> None:
        """Leave the connection: the server process is ended (stdin closed, then terminated and
        killed if it does not exit)."""
        holder, self._holder = self._holder, None
        self._stop.set()
        if holder is not None:
            try:  # the SDK bounds a stdio server's shutdown; an HTTP server's goodbye is bounded here
                await asyncio.wait_for(asyncio.shield(holder), _STOP_TIMEOUT)
            except TimeoutError:
                holder.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await holder
        self._client = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def _hold(self) -> None:
        from mcp import Client

        try:
            async with Client(self._transport(), elicitation_callback=self._elicit, mode="auto") as client:
                self._client = client
                self._ready.set()
                await self._stop.wait()
        except Exception as failure:  # noqa: BLE001 - kept to be reported by the call that needs the server
            self._failure = failure
        finally:
            self._client = None
            self._ready.set()

    def _transport(self) -> Any:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        server = self.server
        if server.command is not None:
            parameters = StdioServerParameters(command=server.command, args=list(server.args), env=dict(server.env) or None,
                                               cwd=server.cwd)
            return stdio_client(parameters, errlog=self._stderr)  # type: ignore[arg-type]
        return streamable_http_client(server.url or "", http_client=create_mcp_http_client(headers=dict(server.headers)))

    # ---- using it ----------------------------------------------------------------------------
    @property
    def protocol_version(self) -> str | None:
        """The protocol revision the server speaks (None before it is started)."""
        return None if self._client is None else self._client.protocol_version

    async def tools(self) -> list[types.Tool]:
        """Every tool the server lists (listed once per connection)."""
        async with self._lock:
            if self._listing is None:
                client = await self._live()
                listing: list[types.Tool] = []
                cursor: str | None = None
                try:
                    async with asyncio.timeout(self.server.startup_timeout):
                        for _ in range(100):  # a listing that never ends cannot hang the run
                            page = await client.list_tools(cursor=cursor)
                            listing += page.tools
                            cursor = page.next_cursor
                            if cursor is None:
                                break
                except TimeoutError:
                    raise await self._failed(f"did not list its tools within {self.server.startup_timeout:g} s") from None
                except Exception as error:  # noqa: BLE001 - the server broke the protocol or went away
                    raise await self._failed(f"could not list its tools: {_reason(error)}") from None
                self._listing = listing
            return self._listing

    async def call(self, name: str, arguments: dict[str, Any], *, asker: Asker | None = None) -> types.CallToolResult:
        """Call tool ``name``; ``asker`` answers the server's elicitations during the call. A
        protocol error the server answers with (an unknown tool, arguments it refuses) is raised
        as the SDK's ``MCPError``; a server that does not answer in time, exits or breaks the
        connection raises :class:`MCPServerError` (and is stopped)."""
        from mcp.shared.exceptions import MCPError

        timeout = self.server.timeout
        async with self._lock:
            client = await self._live()
            self._asker = asker
            try:
                async with asyncio.timeout(timeout):
                    return await client.call_tool(name, arguments)
            except TimeoutError:
                raise await self._failed(f"{name} did not answer within {timeout:g} s, so the server was stopped "
                                         "(the next call starts it again)", timeout=True) from None
            except MCPError as error:
                if error.code != _CLOSED:
                    raise
                raise await self._failed(f"the connection closed during {name} (the server exited or crashed)") from None
            except Exception as error:  # noqa: BLE001 - the transport failed under the call
                raise await self._failed(f"{name} failed: {_reason(error)}") from None
            finally:
                self._asker = None

    async def _live(self) -> Client:
        """The client, (re)starting the server when it is not running."""
        if self._client is None or self._holder is None or self._holder.done():
            await self.stop()
            await self.start()
        assert self._client is not None  # start() raises otherwise
        return self._client

    async def _elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        import mcp_types as types

        if self._asker is None:  # no call of ours is asking: nobody to answer
            return types.ElicitResult(action="decline")
        return await self._asker(params)

    # ---- errors ------------------------------------------------------------------------------
    def stderr_tail(self) -> str:
        """The end of what the server wrote to its stderr (its secrets masked)."""
        stream = self._stderr
        if stream is None or stream.closed:
            return ""
        stream.flush()
        end = stream.seek(0, 2)
        stream.seek(max(0, end - STDERR_TAIL * 4))
        text = stream.read()[-STDERR_TAIL:]
        stream.seek(0, 2)
        return self.server.redact(text.strip())

    async def _failed(self, message: str, *, timeout: bool = False) -> MCPServerError:
        """The error to raise (with the end of the server's stderr), the server stopped."""
        kind = MCPServerTimeout if timeout else MCPServerError
        error = kind(self.server.redact(message), server=self.server.name, stderr=self.stderr_tail())
        await self.stop()
        return error


def _reason(error: BaseException | None) -> str:
    """What went wrong, read through the exception groups of the SDK's task groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if error is None:
        return "it stopped"
    if isinstance(error, FileNotFoundError):
        return f"no such command: {error.filename}"
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}" if type(error).__name__ not in text else text
