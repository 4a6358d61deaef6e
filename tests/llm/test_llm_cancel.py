"""A cancelled call on the embedded model stops its worker thread early (the real SmolLM2)."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from statebound.llm.base import Request
from statebound.llm.model_files import llama_cpp_missing
from statebound.llm.registry import open_model

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed"),
]
# SmolLM2 keeps counting to the end of max_tokens (2000 tokens: about 40x the 64-token call).
COUNTING = "Counting from one to ten thousand: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,"


async def test_cancelling_a_long_completion_ends_its_thread_within_a_few_tokens() -> None:
    llm = open_model("smollm2", mode="completion")
    short = Request(prompt=COUNTING, max_tokens=64)
    await llm.complete(short)  # loads the model and caches the prompt
    started = time.perf_counter()
    reference = await llm.complete(short)
    sixty_four_tokens = time.perf_counter() - started
    assert reference.finish_reason == "length"  # the prompt keeps the model going

    executor = ThreadPoolExecutor(max_workers=1)  # the thread the call runs in, to wait for it
    asyncio.get_running_loop().set_default_executor(executor)
    task = asyncio.create_task(llm.complete(Request(prompt=COUNTING, max_tokens=2000)))
    await asyncio.sleep(1.0)
    assert not task.done()
    task.cancel()
    cancelled_at = time.perf_counter()
    with pytest.raises(asyncio.CancelledError):
        await task
    executor.shutdown(wait=True)
    thread_ran_on = time.perf_counter() - cancelled_at
    # Uncancelled, the thread would generate the ~1950 tokens left: tens of times this bound.
    assert thread_ran_on < sixty_four_tokens

    # The model is consistent after the stop: the same greedy request gives the same text.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(max_workers=1))
    assert (await llm.complete(short)).text == reference.text


@pytest.mark.parametrize("request_", [Request(prompt=COUNTING, max_tokens=8),
                                      Request(prompt=COUNTING, score=" 11, 12")], ids=["sample", "score"])
def test_a_call_cancelled_before_it_starts_does_not_run(request_: Request) -> None:
    llm = open_model("smollm2", mode="completion")
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(asyncio.CancelledError):
        llm.complete_blocking(request_, cancel=cancelled)
    assert llm.complete_blocking(request_, cancel=threading.Event()).choices  # an unset event: runs
