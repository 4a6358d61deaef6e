"""Fixtures for the LLM backend tests: a scripted faulty HTTP server and a real llama.cpp server."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import IO

import httpx
import pytest
from llm_fault_server import FaultServer
from processes import free_port, stop

from statebound.llm.model_files import llama_cpp_missing

# One llama.cpp thread unless told otherwise: on a machine whose cores are shared, more threads
# spin-wait on each other and the small model gets several times slower.
os.environ.setdefault("STATEBOUND_THREADS", "1")


@pytest.fixture
def fault_server() -> Iterator[tuple[FaultServer, str]]:
    server = FaultServer()
    base_url = server.start()
    try:
        yield server, base_url
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _no_ambient_settings(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never read the developer's real keys, endpoints or config file."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "STATEBOUND_MODEL", "STATEBOUND_OPENAI_MODEL",
                 "STATEBOUND_TIMEOUT", "STATEBOUND_ATTEMPTS", "STATEBOUND_HTTP_TRANSPORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("STATEBOUND_CONFIG", str(tmp_path_factory.mktemp("cfg") / "config.toml"))


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server with SmolLM2, on loopback; always terminated."""
    if llama_cpp_missing():
        pytest.skip("llama-cpp-python is not installed")
    from statebound.llm.model_files import smollm2_path

    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path()),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
        "--n_threads", os.environ["STATEBOUND_THREADS"], "--verbose", "False",
    ]
    with tempfile.TemporaryFile() as log:  # a file, not a pipe: a full pipe stalls the server
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        try:
            yield _wait_until_ready(process, f"http://127.0.0.1:{port}/v1", log)
        finally:
            stop(process, timeout=10)


def _wait_until_ready(process: subprocess.Popen[bytes], base_url: str, log: IO[bytes]) -> str:
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            log.seek(0)
            error = log.read().decode(errors="replace")[-2000:]
            pytest.fail(f"llama_cpp.server exited with {process.returncode}: {error}")
        try:
            if httpx.get(f"{base_url}/models", timeout=1).status_code == 200:
                return base_url
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            pytest.fail("llama_cpp.server did not become ready within 60 s")
        time.sleep(0.25)
