"""Responders for function-LLM models in the harness tests, and a stored-trajectory entry maker
(importable as ``harness_doubles``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
from pathlib import Path
from typing import Any

from statebound.benchmarks.toy import oracle
from statebound.contract.trace import TraceEntry
from statebound.errors import FatalProviderError, UnsupportedFeature
from statebound.llm.base import Request, Usage
from statebound.llm.testing import request_text


def entry(state: str | None, role: Any, content: str, *, usage: Usage | None = None) -> dict[str, Any]:
    """One trajectory entry in its stored form."""
    return TraceEntry(state=state, role=role, content=content, usage=usage).to_dict()


def crash_on_toy_003(request: Request) -> str:
    if "toy-003" in request_text(request):
        raise RuntimeError("boom on toy-003")
    return oracle(request)


def kill_worker_on_toy_003(request: Request) -> str:
    """Kills its own process on toy-003, up to $STATEBOUND_TEST_DEATHS times over all processes
    (each death is a line in the file $STATEBOUND_TEST_DEATH_LOG)."""
    if "toy-003" in request_text(request):
        log = Path(os.environ["STATEBOUND_TEST_DEATH_LOG"])
        deaths = len(log.read_text().splitlines()) if log.exists() else 0
        if deaths < int(os.environ["STATEBOUND_TEST_DEATHS"]):
            with log.open("a") as handle:
                handle.write(f"{os.getpid()}\n")
            os._exit(1)
    return oracle(request)


def refused_on_toy_003(request: Request) -> str:
    """Stands in for a provider that refuses the key (HTTP 401) from toy-003 on."""
    if "toy-003" in request_text(request):
        raise FatalProviderError("HTTP 401, authentication failed: check the API key", provider="scripted server")
    return oracle(request)


def unsupported_on_toy_003(request: Request) -> str:
    """Stands in for a backend that cannot do what the run asks (e.g. a grammar)."""
    if "toy-003" in request_text(request):
        raise UnsupportedFeature("this backend cannot do what the run asks")
    return oracle(request)


async def sleepy(request: Request) -> str:
    await asyncio.sleep(5)
    return oracle(request)


def wordy(request: Request) -> str:
    return oracle(request) + " padding" * 30


async def dozy(request: Request) -> str:
    """:func:`oracle` after 0.3 s: a run of a few dozen episodes takes seconds (interrupt tests)."""
    await asyncio.sleep(0.3)
    return oracle(request)


async def slow_to_stop(request: Request) -> str:
    """:func:`oracle` after 0.3 s for toy-000 to toy-003 and 60 s for the others (so a stop once
    four are stored finds every running episode in its call); when cancelled it cleans up for 60 s,
    cancelled again or not (a stuck shutdown)."""
    task = re.search(r"toy-(\d+)", request_text(request))
    try:
        await asyncio.sleep(0.3 if task and int(task[1]) < 4 else 60)
    except asyncio.CancelledError:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(deadline - time.monotonic())
        raise
    return oracle(request)


async def stuck_in_thread(request: Request) -> str:
    """:func:`oracle` after 0.3 s for toy-000 to toy-007 and 30 s for the others, spent in a worker
    thread as an in-process model's call is: a cancelled episode leaves its thread running."""
    task = re.search(r"toy-(\d+)", request_text(request))
    await asyncio.to_thread(time.sleep, 0.3 if task and int(task[1]) < 8 else 30)
    return oracle(request)
