"""What every request to the server passes before a handler sees it: its Host is one of the
server's own names (no DNS rebinding), a state-changing request from a web page comes from the
server's own origin, a bearer token when one is set, and a bounded body."""

from __future__ import annotations

import hmac
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["LOCAL_NAMES", "Guard", "TooLarge"]

LOCAL_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


def _host_name(host: str) -> str:
    """``name`` of ``name:port`` (and ``[::1]`` of ``[::1]:port``)."""
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """ASGI middleware: 421 for a foreign Host, 403 for a cross-origin write, 401 without the
    token, 413 for a body over ``max_body`` bytes; answers as JSON ``{"detail": ...}``."""

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str], token: str | None, max_body: int) -> None:
        self.app = app
        self.hosts = frozenset(LOCAL_NAMES | {h.lower() for h in hosts})
        self.token = token
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        host = headers.get("host", "")
        problem = self._problem(scope["method"], host, headers)
        if problem is not None:
            await _answer(send, *problem)
            return
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await _answer(send, 413, f"the request body is over {self.max_body} bytes")
            return
        await self.app(scope, self._bounded(receive, send), send)

    def _problem(self, method: str, host: str, headers: dict[str, str]) -> tuple[int, str] | None:
        if _host_name(host.lower()) not in self.hosts:
            return 421, f"this server answers only for {', '.join(sorted(self.hosts))}, not {host!r}"
        origin = headers.get("origin")
        if method not in _SAFE and origin is not None and urlsplit(origin).netloc.lower() != host.lower():
            return 403, "state-changing requests from another site's pages are refused"
        if self.token is not None:
            given = headers.get("authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
                return 401, "this server needs its token: Authorization: Bearer TOKEN"
        return None

    def _bounded(self, receive: Receive, send: Send) -> Receive:
        """``receive``, cut off with a 413 once a body without a length grows over the bound."""
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise TooLarge(self.max_body)
            return message

        return bounded


class TooLarge(Exception):
    def __init__(self, bound: int) -> None:
        super().__init__(f"the request body is over {bound} bytes")


async def _answer(send: Send, status: int, detail: str) -> None:
    import orjson

    body = orjson.dumps({"detail": detail})
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
