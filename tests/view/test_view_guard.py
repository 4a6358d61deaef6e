"""The viewer answers only its own host names, and reads forms strictly (issue #51): a request
naming another host (DNS rebinding) gets 421 before any handler runs, a fork form that is not UTF-8
or holds a number past what a store keeps gets 400 with the reason, and a body past the bound 413
without being read. Over the real server (raw HTTP, any Host header) and through the guarded app."""

from __future__ import annotations

import html
import http.client
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner
from view_server import serving

from statebound.cli.app import app
from statebound.flow.live import SQLiteCheckpointer
from statebound.view.app import build_app
from statebound.view.sources import find_sources
from statebound.web import DEFAULT_MAX_BODY, HostGuard, allowed_hosts, parse_form
from statebound.web.forms import FormError

PAST_INT64 = str(2**63)


def _threads(store: Path) -> list[str]:
    with SQLiteCheckpointer(store, read_only=True) as checkpoints:
        return [info.thread for info in checkpoints.threads()]


def _request(url: str, method: str, path: str, *, host: str, body: bytes = b"",
             headers: dict[str, str] | None = None) -> tuple[int, str]:
    """``method path`` to the server at ``url``, with any ``Host`` header."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for key, value in {"Host": host, "Content-Length": str(len(body)), **(headers or {})}.items():
            connection.putheader(key, value)
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def test_the_server_answers_only_its_own_host_names(live_store: Path) -> None:
    with serving(live_store, "--allow-host", "viewer.lan") as (url, _):
        port = urlsplit(url).port
        rebinding = f"evil.example:{port}"
        status, text = _request(url, "GET", "/", host=rebinding)
        assert status == 421 and "answers only to" in text and "evil.example" in text
        fork = _request(url, "POST", "/store/live/fork/t1", host=rebinding, body=b"seq=1",
                        headers={"Origin": f"http://{rebinding}", "Content-Type": "application/x-www-form-urlencoded"})
        assert fork[0] == 421 and _threads(live_store) == ["t1"]  # the handler never ran
        for name in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"viewer.lan:{port}", "LOCALHOST."):
            assert _request(url, "GET", "/", host=name)[0] == 200, name
        assert _request(url, "GET", "/", host=f"127.0.0.1.evil.example:{port}")[0] == 421


def test_a_body_past_the_bound_is_refused_unread(live_store: Path) -> None:
    with serving(live_store) as (url, _):
        parts = urlsplit(url)
        with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:  # 400 MB declared, none sent
            sock.sendall(f"POST /store/live/fork/t1 HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                         f"Content-Length: {400 << 20}\r\n\r\n".encode())
            answer = b""
            while b"bytes" not in answer and (chunk := sock.recv(4096)):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 413") and b"larger than 65,536 bytes" in answer
    assert _threads(live_store) == ["t1"]


def _guarded(*paths: Path) -> TestClient:
    """The viewer as ``statebound view`` serves it, for a client that names it ``127.0.0.1``."""
    return TestClient(HostGuard(build_app(find_sources(paths)), hosts=allowed_hosts("127.0.0.1")),
                      base_url="http://127.0.0.1:8765")


def test_the_guard_refuses_before_any_handler(live_store: Path) -> None:
    web = _guarded(live_store)
    assert web.get("/", headers={"Host": "evil.example"}).status_code == 421
    assert web.post("/store/live/fork/t1", content=b"seq=1", headers={"Origin": "null"}).status_code == 403
    crossed = web.post("/store/live/fork/t1", content=b"seq=1", headers={"Sec-Fetch-Site": "cross-site"})
    assert crossed.status_code == 403

    def chunks():  # no Content-Length: the guard counts what arrives
        for _ in range(DEFAULT_MAX_BODY // 1024 + 2):
            yield b"x" * 1024

    assert web.post("/store/live/fork/t1", content=chunks()).status_code == 413
    assert _threads(live_store) == ["t1"]
    made = web.post("/store/live/fork/t1", data={"seq": "1"}, headers={"Origin": "http://127.0.0.1:8765"},
                    follow_redirects=False)
    assert made.status_code == 303  # the viewer's own page may fork


@pytest.mark.parametrize(("body", "said"), [
    (b"seq=\xff\xfe", "not UTF-8"),
    (b"seq=%ff", "not UTF-8"),
    (f"seq={PAST_INT64}".encode(), f"from 0 to {2**63 - 1}"),
    (b"seq=-1", f"from 0 to {2**63 - 1}"),
    (b"seq=1e3", "whole number"),
    (f"seq=1&edit_index={PAST_INT64}&edit_text=x".encode(), "the #index of the entry to edit must be"),
    (b"seq=1&seq=2", "gives seq twice"),
    (b"seq=1&other=2", "has a field 'other'"),
])
def test_a_form_that_cannot_be_read_is_a_400_saying_why(live_store: Path, body: bytes, said: str) -> None:
    answer = _guarded(live_store).post("/store/live/fork/t1", content=body,
                                       headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert answer.status_code == 400 and said in html.unescape(answer.text)
    assert _threads(live_store) == ["t1"]


def test_a_seed_past_what_a_store_keeps_is_a_400(sql_run: Path) -> None:
    web = _guarded(sql_run)
    answer = web.get("/run/run-sql/episode", params={"task": "3", "agent": "gold", "seed": PAST_INT64})
    assert answer.status_code == 400 and "seed must be a whole number" in answer.text
    assert web.get("/compare", params={"run": "run-sql", "task": "3", "a": "gold", "b": "gold",
                                       "seed": "x"}).status_code == 400
    assert web.get("/run/run-sql/episode", params={"task": "3", "agent": "gold", "seed": "0"}).status_code == 200


def test_parse_form_takes_named_fields_once() -> None:
    assert parse_form(b"seq=3&name=+a%20b+", fields=("seq", "name")) == {"seq": "3", "name": "a b"}
    with pytest.raises(FormError, match="more fields"):
        parse_form(b"&".join([b"seq=1"] * 50), fields=("seq",))


def test_the_cli_fork_refuses_a_number_past_what_a_store_keeps(live_store: Path) -> None:
    for args in (["--fork", PAST_INT64], ["--fork", "1", "--edit", PAST_INT64, "x"]):
        result = CliRunner().invoke(app, ["threads", str(live_store), "t1", *args])
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert str(2**63 - 1) in result.output
    assert _threads(live_store) == ["t1"]
