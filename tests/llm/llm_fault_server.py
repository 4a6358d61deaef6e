"""A tiny scripted HTTP server on 127.0.0.1 that plays an OpenAI-compatible API badly on purpose.

Each request takes the next behaviour from the script: a status code with a body (429 with a
Retry-After in seconds or as an HTTP date, 5xx, an HTML error page, 401, 404), a connection closed
before the reply (``DROP``) or reset before it (``RESET``) or during it (``CUT``: the headers and
half the body, then a reset), an empty body, malformed JSON, a reply without choices, a slow or
hanging reply, or a good completion. ``GET /v1/models`` (the profile probe) always answers a plain
OpenAI model listing, outside the script. When the script is used up, every further request gets HTTP
500, so a client can never loop forever on it, and the server shuts itself down after
``lifetime`` seconds even if a test forgets to stop it.
"""

from __future__ import annotations

import email.utils
import json
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)
    delay: float = 0.0
    drop: bool = False  # close the connection (FIN) without replying
    reset: bool = False  # reset the connection (RST): before replying, or with ``cut`` mid-reply
    cut: bool = False  # send the headers and half the body, then reset
    drip: float = 0.0  # send the body one byte every ``drip`` seconds


def completion_body(text: str = "hello", *, chat: bool = True, n: int = 1) -> bytes:
    if chat:
        choices = [
            {"index": i, "message": {"role": "assistant", "content": text},
             "finish_reason": "stop", "logprobs": None}
            for i in range(n)
        ]
        kind = "chat.completion"
    else:
        choices = [{"index": i, "text": text, "finish_reason": "stop", "logprobs": None}
                   for i in range(n)]
        kind = "text_completion"
    return json.dumps({
        "id": "x", "object": kind, "created": 0, "model": "m", "choices": choices,
        "usage": {"prompt_tokens": 3, "completion_tokens": n, "total_tokens": 3 + n},
    }).encode()


OK = Reply(body=completion_body())
DROP = Reply(drop=True)
RESET = Reply(reset=True)
CUT = Reply(body=completion_body(), reset=True, cut=True)
EMPTY = Reply(body=b"")
MALFORMED = Reply(body=b'{"choices": [')
NO_CHOICES = Reply(body=b'{"id": "x", "choices": []}')
HTML_503 = Reply(status=503, body=b"<html><body>Service Unavailable</body></html>",
                 headers=(("Content-Type", "text/html"),))


def http_date(seconds_from_now: float) -> str:
    """A Retry-After value as an HTTP date."""
    return email.utils.formatdate(time.time() + seconds_from_now, usegmt=True)


def status(code: int, *, body: str = '{"error": {"message": "scripted"}}',
           retry_after: str | None = None) -> Reply:
    headers = [("Content-Type", "application/json")]
    if retry_after is not None:
        headers.append(("Retry-After", retry_after))
    return Reply(status=code, body=body.encode(), headers=tuple(headers))


def slow(seconds: float) -> Reply:
    return Reply(body=completion_body(), delay=seconds)


@dataclass
class FaultServer:
    script: deque[Reply] = field(default_factory=deque)
    seen: list[dict[str, str]] = field(default_factory=list)  # lower-cased headers per request
    bodies: list[dict[str, object]] = field(default_factory=list)  # parsed JSON request bodies
    lifetime: float = 60.0
    owned_by: str = "system"  # who /v1/models says owns the model (the profile probe reads it)
    gets: dict[str, object] = field(default_factory=dict)  # other GET paths' JSON answers (a probe's)

    def play(self, *replies: Reply) -> None:
        self.script.clear()
        self.seen.clear()
        self.bodies.clear()
        self.script.extend(replies)

    def start(self) -> str:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # the profile probe: a model listing and ``gets``, outside the script
                listing = {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": owner.owned_by}]}
                found = listing if self.path.endswith("/models") else owner.gets.get(self.path)
                body = json.dumps(found if found is not None else {"detail": "Not Found"})
                self.send_response(200 if found is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                owner.bodies.append(json.loads(self.rfile.read(length) or b"{}"))
                owner.seen.append({k.lower(): v for k, v in self.headers.items()})
                reply = owner.script.popleft() if owner.script else status(500)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if reply.reset:
                    if reply.cut:
                        self.send_response(reply.status)
                        self.send_header("Content-Length", str(len(reply.body)))
                        self.end_headers()
                        self.wfile.write(reply.body[: len(reply.body) // 2])
                        self.wfile.flush()
                        time.sleep(0.05)  # the client has the headers: it is reading the body
                    linger = struct.pack("ii", 1, 0)  # close with a reset, not a FIN
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                    self.connection.close()
                    self.close_connection = True
                    return
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers:
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    if reply.drip:
                        for byte in reply.body:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(reply.drip)
                    else:
                        self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the timeout case)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        self._deadline = threading.Timer(self.lifetime, self._server.shutdown)
        self._deadline.daemon = True
        self._deadline.start()
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def stop(self) -> None:
        self._deadline.cancel()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
