"""Responders for function-LLM models in the harness tests (importable as ``harness_doubles``)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from statebound.bench.toy import oracle
from statebound.errors import UnsupportedFeature
from statebound.llm.base import Request
from statebound.llm.testing import request_text


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
