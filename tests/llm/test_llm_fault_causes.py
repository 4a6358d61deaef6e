"""Each network fault has its own error class and a message naming the cause, on both transports;
which faults are retried, which stop a run (FatalProviderError), and what Retry-After does."""

from __future__ import annotations

import logging
import socket

import pytest
from llm_fault_server import (
    CUT,
    DROP,
    HTML_503,
    MALFORMED,
    NO_CHOICES,
    OK,
    RESET,
    FaultServer,
    http_date,
    slow,
    status,
)

from statebound.errors import (
    FatalProviderError,
    ModelUnavailable,
    ProviderConnectionRefused,
    ProviderDisconnected,
    ProviderError,
    ProviderHostNotFound,
    ProviderTimeout,
    ProviderTLSError,
    ProviderUnreachable,
)
from statebound.llm.base import chat, complete_sync
from statebound.llm.registry import open_model
from statebound.llm.retry import RetryPolicy

KEY = "sk-causes-0123456789abcdefSECRET"
Server = tuple[FaultServer, str]


@pytest.fixture(params=["aiohttp", "httpx"])
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


def ask(base_url: str, transport: str, *, attempts: int = 2, timeout: float = 5.0) -> str:
    llm = open_model("openai:m", base_url=base_url, api_key=KEY, timeout=timeout, transport=transport,
                     retry=RetryPolicy(attempts=attempts, initial_wait=0.01, max_wait=0.02))
    return complete_sync(llm, chat(("user", "hi"), max_tokens=4)).text


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_connection_refused_is_named(transport: str) -> None:
    port = closed_port()
    with pytest.raises(ProviderConnectionRefused, match=f"connection refused at 127.0.0.1:{port}") as caught:
        ask(f"http://127.0.0.1:{port}/v1", transport)
    assert "is the server running" in str(caught.value) and caught.value.attempts == 2
    assert isinstance(caught.value, ProviderUnreachable | FatalProviderError)  # stops a run
    assert "timeout" not in str(caught.value)


def test_unknown_host_is_a_dns_failure(transport: str) -> None:
    with pytest.raises(ProviderHostNotFound, match="host not found: the name in no-such-host.invalid"):
        ask("http://no-such-host.invalid/v1", transport, attempts=1)


def test_https_to_a_plain_server_is_a_tls_failure(fault_server: Server, transport: str) -> None:
    _, base_url = fault_server
    with pytest.raises(ProviderTLSError, match=r"TLS handshake .* failed \(WRONG_VERSION_NUMBER\): .*use http://"):
        ask(base_url.replace("http://", "https://"), transport, attempts=1)


@pytest.mark.parametrize("fault, words", [
    (DROP, "closed the connection before replying"),
    (RESET, "was reset"),
    (CUT, "reset"),
], ids=["closed-before", "reset-before", "reset-during"])
def test_dropped_connections_are_disconnects_and_retried(fault_server: Server, transport: str, fault, words) -> None:
    server, base_url = fault_server
    server.play(fault, OK)
    assert ask(base_url, transport) == "hello"  # retried: the second attempt gets the reply
    assert len(server.seen) == 2
    server.play(fault, fault)
    with pytest.raises(ProviderDisconnected, match=words) as caught:
        ask(base_url, transport)
    assert caught.value.attempts == 2 and "timeout" not in str(caught.value)


def test_a_reply_cut_short_says_so_where_the_client_can_tell(fault_server: Server) -> None:
    server, base_url = fault_server
    server.play(CUT)
    with pytest.raises(ProviderDisconnected, match="stopped short: the connection was reset during it"):
        ask(base_url, "aiohttp", attempts=1)  # httpx cannot tell a reset mid-reply from one before it


def test_a_hanging_server_is_a_timeout(fault_server: Server, transport: str) -> None:
    server, base_url = fault_server
    server.play(slow(3.0), slow(3.0))
    with pytest.raises(ProviderTimeout, match="no reply from 127.0.0.1:.* within 0.3 s") as caught:
        ask(base_url, transport, timeout=0.3)
    assert caught.value.attempts == 2


@pytest.mark.parametrize("code, words", [(401, "check the API key"), (403, "permission denied"),
                                         (404, "check the model name and the base_url")])
def test_refusals_are_fatal_and_not_retried(fault_server: Server, transport: str, code: int, words: str) -> None:
    server, base_url = fault_server
    server.play(status(code), OK)
    with pytest.raises(FatalProviderError, match=f"HTTP {code}, .*{words}") as caught:
        ask(base_url, transport, attempts=3)
    assert caught.value.attempts == 1 and len(server.seen) == 1


@pytest.mark.parametrize("fault, words", [
    (HTML_503, "HTTP 503, server error: .*body '<html><body>Service Unavailable"),
    (MALFORMED, "malformed response: the body is not JSON"),
    (NO_CHOICES, "malformed response: no choices in the reply"),
    (status(400, body='{"error": {"message": "bad field"}}'), "HTTP 400, request rejected: .*bad field"),
], ids=["html-503", "malformed-json", "empty-choices", "400"])
def test_other_faults_fail_the_request_only(fault_server: Server, transport: str, fault, words: str) -> None:
    server, base_url = fault_server
    server.play(fault, fault)
    with pytest.raises(ProviderError, match=words) as caught:
        ask(base_url, transport)
    assert not isinstance(caught.value, FatalProviderError | ProviderDisconnected | ProviderTimeout)
    assert len(server.seen) == caught.value.attempts  # 400 once, the others retried


@pytest.mark.parametrize("retry_after", ["0.4", "date"])
def test_retry_after_in_seconds_or_as_a_date(fault_server: Server, transport: str, retry_after: str,
                                             caplog: pytest.LogCaptureFixture) -> None:
    server, base_url = fault_server
    server.play(status(429, retry_after=http_date(2) if retry_after == "date" else retry_after), OK)
    with caplog.at_level(logging.WARNING, logger="statebound.llm.retry"):
        assert ask(base_url, transport) == "hello"
    waited = float(caplog.text.split("retrying in ")[1].split(" s")[0])
    assert "HTTP 429, rate limited" in caplog.text
    assert (waited == 0.4) if retry_after != "date" else (0.5 < waited <= 2.0)  # the date is whole seconds
    assert len(server.seen) == 2


def test_a_password_in_the_url_is_never_shown(fault_server: Server) -> None:
    server, base_url = fault_server
    url = base_url.replace("http://", "http://bob:hunter2pass@")
    server.play(status(500, body='{"error": {"message": "at http://bob:hunter2pass@host"}}'))
    with pytest.raises(ModelUnavailable, match="use transport='httpx'"):
        open_model("openai:m", base_url=url, transport="aiohttp")
    llm = open_model("openai:m", base_url=url, retry=RetryPolicy(attempts=1))
    assert llm.transport == "httpx"  # chosen for a URL with credentials
    with pytest.raises(ProviderError) as caught:
        complete_sync(llm, chat(("user", "hi")))
    for text in (str(caught.value), repr(llm), repr(llm.settings)):
        assert "hunter2pass" not in text
    assert "bob:***@" in str(caught.value)
