"""Only the server's own host names, only bounded bodies: an ASGI middleware for statebound's local
HTTP servers, checking every request before any handler runs.

A server bound to 127.0.0.1 is still reachable from a browser on another site through DNS
rebinding: that site's name is made to resolve to 127.0.0.1, and the browser sends the site's
name in ``Host``. So:

* ``Host`` must be one of the server's names (:func:`allowed_hosts`: 127.0.0.1, localhost, ::1,
  the address it is bound to, and names given): anything else gets 421 Misdirected Request;
* a request that may change something (POST, PUT, PATCH, DELETE) sent by a page of another origin
  (``Origin`` naming another host, ``Origin: null``, ``Sec-Fetch-Site: cross-site``) gets 403;
* a body past ``max_body`` bytes gets 413, whether it declares its length or not: the body is read,
  up to the bound, before the handler runs, and handed to it whole.

```python
app = HostGuard(build_app(sources), hosts=allowed_hosts("127.0.0.1", ["viewer.lan"]), max_body=64 * 1024)
```
"""

from __future__ import annotations

import hmac
from collections.abc import Collection, Iterable, Mapping
from urllib.parse import urlsplit

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["DEFAULT_MAX_BODY", "LOCAL_HOSTS", "UNSAFE_METHODS", "HostGuard", "TokenGuard", "allowed_hosts",
           "foreign_origin", "host_name"]

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
DEFAULT_MAX_BODY = 64 * 1024
"""Bytes a request body may have by default (the viewer's forms need a few hundred)."""
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def host_name(value: str) -> str:
    """The host name of a ``Host`` header or an address (``[::1]:8765`` -> ``::1``), lower-case,
    without a trailing dot."""
    value = value.strip().lower()
    if value.startswith("["):
        value = value[1:value.index("]")] if "]" in value else value[1:]
    elif value.count(":") == 1:  # name:port (a bare IPv6 address has several colons)
        value = value.partition(":")[0]
    return value.rstrip(".")


def allowed_hosts(bound: str | None = None, extra: Iterable[str] = ()) -> frozenset[str]:
    """The names a server answers to: :data:`LOCAL_HOSTS`, the address it is ``bound`` to, and
    the ``extra`` names (``--allow-host``)."""
    return frozenset({*LOCAL_HOSTS, *(host_name(name) for name in (*([bound] if bound else []), *extra))})


def foreign_origin(headers: Mapping[str, str]) -> str | None:
    """Why a request comes from a page of another origin than the one it is sent to (``Origin``
    naming another host and port than ``Host``, ``Origin: null``, ``Sec-Fetch-Site: cross-site``),
    or ``None``: a page of the server's own, or no browser page at all (no ``Origin``)."""
    if headers.get("sec-fetch-site") == "cross-site":
        return "a page of another site sent it (Sec-Fetch-Site: cross-site)"
    origin = headers.get("origin")
    if origin is None:
        return None
    if origin.strip().lower() == "null":
        return "a page without an origin sent it (Origin: null)"
    if urlsplit(origin.strip()).netloc.lower() != headers.get("host", "").strip().lower():
        return f"a page of {origin.strip()[:200]} sent it"
    return None


class HostGuard:
    """An ASGI middleware in front of ``app``: 421 for a ``Host`` not in ``hosts``, 403 for a
    changing request from another origin, 413 for a body past ``max_body`` bytes; anything else
    reaches ``app`` with its body read."""

    def __init__(self, app: ASGIApp, *, hosts: Collection[str], max_body: int = DEFAULT_MAX_BODY) -> None:
        self.app = app
        self.hosts = frozenset(host_name(name) for name in hosts)
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):  # lifespan
            await self.app(scope, receive, send)
            return
        pairs = [(key.decode("latin-1").lower(), value.decode("latin-1")) for key, value in scope["headers"]]
        headers = dict(pairs)
        if (refusal := self._refusal(scope, pairs, headers)) is not None:
            status, text = refusal
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008, "reason": text[:120]})
            else:
                await PlainTextResponse(text, status_code=status)(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        body = await self._body(receive)
        if body is None:
            await PlainTextResponse(f"the request body is larger than {self.max_body:,} bytes, this server's limit",
                                    status_code=413)(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def _refusal(self, scope: Scope, pairs: list[tuple[str, str]], headers: dict[str, str]) -> tuple[int, str] | None:
        hosts = [value for key, value in pairs if key == "host"]
        if len(hosts) != 1 or host_name(hosts[0]) not in self.hosts:
            named = f"{hosts[0].strip()[:200]!r}" if len(hosts) == 1 else f"{len(hosts)} Host headers"
            return 421, (f"this server answers only to {', '.join(sorted(self.hosts))}, not to {named} "
                         "(a page of another site may be trying to reach it)")
        if scope.get("method", "GET") in UNSAFE_METHODS and (why := foreign_origin(headers)) is not None:
            return 403, f"refused: {why}; changes are made from this server's own pages"
        declared = headers.get("content-length")
        if declared is not None and not (declared.strip().isdigit() and len(declared.strip()) < 19):
            return 400, f"Content-Length {declared[:40]!r} is not a byte count"
        if declared is not None and int(declared) > self.max_body:
            return 413, f"the request body ({int(declared):,} bytes) is larger than {self.max_body:,} bytes, this server's limit"
        return None

    async def _body(self, receive: Receive) -> bytes | None:
        """The whole body, or ``None`` once it passes ``max_body`` (the rest is not read)."""
        parts, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return b""
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts)


class TokenGuard:
    """An ASGI middleware in front of ``app``: 401 for a request without ``Authorization: Bearer
    TOKEN`` (compared in constant time)."""

    def __init__(self, app: ASGIApp, *, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            given = next((value for key, value in scope["headers"] if key.lower() == b"authorization"), b"")
            if not hmac.compare_digest(given, self.expected):
                await PlainTextResponse("this server needs its token: Authorization: Bearer TOKEN",
                                        status_code=401)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` first, then what the connection says (a disconnect)."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
