"""The bundled arithmetic flow with the real embedded model (SmolLM2-135M)."""

from __future__ import annotations

import importlib.util
from dataclasses import replace

import msgspec
import pytest

from statebound.examples import example_task, load_example
from statebound.examples.arithmetic import answer_of

pytestmark = pytest.mark.integration


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama_cpp is not installed yet")
async def test_arithmetic_example_with_smollm2():
    from statebound.llm.registry import open_model

    llm = open_model("smollm2")
    result = await load_example("arithmetic").run(example_task("arithmetic"), llm=llm)
    assert result.error is None
    assert result.usage.calls >= 1 and result.usage.completion_tokens > 0
    assert result.trajectory[:2] == ("Solve", "Calculate")
    # a 135M model may miss, but the run must end by the flow's own rules
    assert result.exit_state in {"End", "Error", "Calculate"}
    if result.ok:
        assert answer_of(result) is not None


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama_cpp is not installed yet")
async def test_arithmetic_example_killed_and_resumed_with_smollm2(tmp_path):
    """Stored, killed after its first commit (the model's first reply), resumed in a new store
    object: the model is asked only what it was not asked before, and the run ends as an
    uninterrupted one does (greedy decoding repeats itself)."""
    from live_helpers import Killed, kill_after

    from statebound.flow.live import SQLiteCheckpointer
    from statebound.llm.registry import open_model

    flow, task = load_example("arithmetic"), example_task("arithmetic")
    whole_llm, llm = CountingLLM(open_model("smollm2")), CountingLLM(open_model("smollm2"))
    whole = await flow.run(task, llm=whole_llm)
    with pytest.raises(Killed):
        await flow.run(task, llm=llm, checkpointer=kill_after(SQLiteCheckpointer(tmp_path / "s.db"), 1), thread="t")
    assert llm.calls == 1
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        resumed = await flow.resume("t", checkpointer=store, llm=llm)
    assert llm.calls == whole_llm.calls  # nothing asked twice
    assert (uncached(resumed.history), resumed.trajectory, resumed.exit_reason) == (
        uncached(whole.history), whole.trajectory, whole.exit_reason)


def uncached(history):
    """The history with each usage's reused-prefix count left out: how much of a prompt the model
    had cached depends on what it evaluated before (other tests, the killed run), not on the run."""
    return [msgspec.structs.replace(e, usage=None if e.usage is None else replace(e.usage, cached_tokens=0))
            for e in history]


class CountingLLM:
    """Passes requests to ``inner`` and counts them."""

    def __init__(self, inner) -> None:
        self.inner, self.calls = inner, 0
        self.model, self.capabilities = inner.model, inner.capabilities

    async def complete(self, request):
        self.calls += 1
        return await self.inner.complete(request)
