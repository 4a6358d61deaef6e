"""Tools the model calls (``CallLLM(tools=...)``) in a checkpointed run: the reply is stored before
any call runs and each result as it comes, so a resumed run never asks the model again for a
reply it gave and never repeats a stored call; a call of a tool that is not repeatable, cut off
by a crash, is not run again without asking (repeat or skip). kill -9 of a real process:
benchmarks/kill_resume.py (``--tools``) and test_live_kill.py."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from live_helpers import Killed, kill_after

from statebound import CallLLM, Flow, Instruction, State, ToolResult, always, called, contains, tool
from statebound.errors import DefinitionError
from statebound.flow import ExitReason
from statebound.flow.checks import check_flow
from statebound.flow.live import SQLiteCheckpointer
from statebound.llm.base import Capabilities, Choice, Request, ToolCall
from statebound.llm.testing import FunctionLLM

TOOLS = Capabilities(chat=True, tools=True)


class Shop:
    """The world outside the run: what the tools did, and a crash planned inside one of them."""

    def __init__(self, die_in: str | None = None) -> None:
        self.done: list[str] = []
        self.die_in = die_in

    def lookup(self, item: str) -> str:
        """Look up an item's price."""
        self._act(f"lookup {item}")
        return f"{item} costs 3"

    def charge(self, item: str) -> ToolResult:
        """Charge the customer for an item."""
        self._act(f"charge {item}")
        return ToolResult(f"charged for {item}", update={"charged": item})

    def _act(self, what: str) -> None:
        self.done.append(what)
        if self.die_in is not None and what.startswith(self.die_in):
            self.die_in = None
            raise Killed  # the process dies inside the tool, after its effect


def buyer(prompts: list[str]) -> FunctionLLM:
    """Asks for a lookup and a charge in one reply, then says it is done; logs every prompt."""

    def respond(request: Request) -> Choice:
        prompts.append(request.messages[-1].content)
        if request.messages[-1].role == "tool":
            return Choice(text="all done")
        return Choice(text="", tool_calls=(ToolCall("c1", "lookup", '{"item": "tea"}'),
                                           ToolCall("c2", "charge", '{"item": "tea"}')))

    return FunctionLLM(respond=respond, capabilities=TOOLS)


@dataclass(frozen=True)
class Basket:
    charged: str | None = None


def shop_flow(shop: Shop) -> Flow:
    act = CallLLM(tools=[shop.lookup, tool(shop.charge, repeatable=False, writes=["charged"])])
    return Flow(name="shop", initial="Buy", vars=Basket, max_turns=4, states=[
        State("Buy", outputs=[Instruction("Buy tea."), act], transitions=[(called(), "Answer"), (always(), "End")]),
        State("Answer", outputs=[act], transitions=[(contains("all done"), "End"), (always(), "Answer")]),
        State("End", final=True),
    ])


def _uninterrupted(tmp_path) -> tuple[list[str], list[str], object, int]:
    shop, prompts = Shop(), []
    with kill_after(SQLiteCheckpointer(tmp_path / "whole.db"), None) as store:
        result = shop_flow(shop).run_sync("x", llm=buyer(prompts), checkpointer=store, thread="t")
        commits = store.commits  # type: ignore[attr-defined]
    assert result.exit_reason is ExitReason.FINAL and result.vars.charged == "tea"
    return shop.done, prompts, result, commits


def test_killed_after_any_commit_the_resumed_run_repeats_no_reply_and_no_call(tmp_path):
    done, prompts, whole, commits = _uninterrupted(tmp_path)
    assert done == ["lookup tea", "charge tea"] and len(prompts) == 2
    asked_about = []
    for limit in range(1, commits):
        shop, asked = Shop(), []
        path = tmp_path / f"k{limit}.db"
        with pytest.raises(Killed):
            shop_flow(shop).run_sync("x", llm=buyer(asked), checkpointer=kill_after(SQLiteCheckpointer(path), limit),
                                     thread="t")
        with SQLiteCheckpointer(path) as store:
            result = shop_flow(shop).resume_sync("t", checkpointer=store, llm=buyer(asked))
            if result.exit_reason is ExitReason.PAUSED:  # killed right after the charge's intent: it never ran
                assert "'charge' was interrupted" in result.pending and shop.done == ["lookup tea"]
                asked_about.append(limit)
                result = shop_flow(shop).resume_sync("t", checkpointer=store, input="repeat", llm=buyer(asked))
        assert shop.done == done, limit  # each tool ran once
        assert asked == prompts, limit  # each reply was asked for once
        assert (result.history, result.vars) == (whole.history, whole.vars), limit
    assert len(asked_about) == 1  # one commit point lies between the charge's intent and the charge


def test_a_crash_inside_a_tool_that_must_not_run_twice_asks_and_skip_goes_on(tmp_path):
    shop, prompts = Shop(die_in="charge"), []
    with SQLiteCheckpointer(tmp_path / "s.db") as store, pytest.raises(Killed):
        shop_flow(shop).run_sync("x", llm=buyer(prompts), checkpointer=store, thread="t")
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        paused = shop_flow(shop).resume_sync("t", checkpointer=store, llm=buyer(prompts))
        assert paused.exit_reason is ExitReason.PAUSED
        assert paused.pending.startswith("tool 'charge' was interrupted while it ran and is not safe to run twice")
        assert shop_flow(shop).resume_sync("t", checkpointer=store).pending == paused.pending  # still waiting
        done = shop_flow(shop).resume_sync("t", checkpointer=store, input="skip", llm=buyer(prompts))
    assert shop.done == ["lookup tea", "charge tea"]  # charged once, not again
    assert done.exit_reason is ExitReason.FINAL and done.vars.charged is None
    skipped = done.history[4]
    assert (skipped.source, skipped.ok, skipped.data["tool_call"]["id"]) == ("tool", False, "c2")
    assert "charge was interrupted and not run again" in skipped.content
    assert len(prompts) == 2  # the reply with both calls was not asked for again


def test_repeat_runs_it_again_and_a_repeatable_tool_runs_again_without_asking(tmp_path):
    shop, prompts = Shop(die_in="charge"), []
    with SQLiteCheckpointer(tmp_path / "s.db") as store, pytest.raises(Killed):
        shop_flow(shop).run_sync("x", llm=buyer(prompts), checkpointer=store, thread="t")
    with SQLiteCheckpointer(tmp_path / "s.db") as store:
        shop_flow(shop).resume_sync("t", checkpointer=store, llm=buyer(prompts))
        done = shop_flow(shop).resume_sync("t", checkpointer=store, input="repeat", llm=buyer(prompts))
    assert shop.done == ["lookup tea", "charge tea", "charge tea"] and done.vars.charged == "tea"

    shop, prompts = Shop(die_in="lookup"), []
    with SQLiteCheckpointer(tmp_path / "r.db") as store, pytest.raises(Killed):
        shop_flow(shop).run_sync("x", llm=buyer(prompts), checkpointer=store, thread="t")
    with SQLiteCheckpointer(tmp_path / "r.db") as store:
        done = shop_flow(shop).resume_sync("t", checkpointer=store, llm=buyer(prompts))
    assert done.exit_reason is ExitReason.FINAL and len(prompts) == 2
    assert shop.done == ["lookup tea", "lookup tea", "charge tea"]  # only the call cut off ran again


def test_tool_marks_a_function_and_flow_check_counts_its_writes(tmp_path):
    shop = Shop()
    marked = tool(shop.charge, repeatable=False, writes=["charged"], name="pay")
    assert (marked.spec.name, marked.repeatable, marked.writes) == ("pay", False, ("charged",))

    @tool(repeatable=False)
    def send(to: str) -> str:
        """Send a letter."""
        return f"sent to {to}"

    assert send.repeatable is False and send.fn("Ann") == "sent to Ann" and send.spec.description == "Send a letter."
    flow = shop_flow(shop)
    assert flow.states_by_name["Buy"].outputs[1].writes == ("charged",)
    assert not [d for d in check_flow(flow) if d.code == "unwritten-variable"]
    with pytest.raises(DefinitionError, match="writes 'paid', which Basket has no field for"):
        Flow(name="f", initial="A", vars=Basket, states=[
            State("A", outputs=[CallLLM(tools=[tool(shop.charge, writes=["paid"])])], transitions=[(always(), "B")]),
            State("B", final=True)])


PAYING_FLOW = '''
import os
import signal
from pathlib import Path

from statebound import CallLLM, Flow, Instruction, State, always, called, contains, tool


def pay(amount: int) -> str:
    """Pay an amount."""
    with open(os.environ["PAID_LOG"], "a") as log:
        log.write(f"paid {amount}\\n")
    marker = Path(os.environ["PAID_LOG"] + ".died")
    if not marker.exists():  # the first time, the process dies right after paying
        marker.write_text("x")
        os.kill(os.getpid(), signal.SIGKILL)
    return f"paid {amount}"


act = CallLLM(tools=[tool(pay, repeatable=False)])
flow = Flow(name="pay", initial="Pay", max_turns=4, states=[
    State("Pay", outputs=[Instruction("Pay 5."), act], transitions=[(called(), "Answer"), (always(), "End")]),
    State("Answer", outputs=[act], transitions=[(contains("done"), "End"), (always(), "Answer")]),
    State("End", final=True),
])
'''
PAYING_MODEL = '''
import os

from statebound.llm.base import Choice, ToolCall


def respond(request):
    with open(os.environ["PAID_LOG"] + ".asked", "a") as log:
        log.write(request.messages[-1].role + "\\n")
    if request.messages[-1].role == "tool":
        return "done"
    return Choice(text="", tool_calls=(ToolCall("p1", "pay", '{"amount": 5}'),))
'''


@pytest.mark.integration
def test_kill_9_inside_a_payment_the_model_asked_for_asks_and_skip_pays_once(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "paying.py").write_text(PAYING_FLOW)
    (tmp_path / "paying_model.py").write_text(PAYING_MODEL)
    env = {**os.environ, "PAID_LOG": str(tmp_path / "paid"), "STATEBOUND_CONFIG": str(tmp_path / "none.toml"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    statebound = [str(Path(sys.executable).with_name("statebound")), "run", f"{tmp_path / 'paying.py'}:flow",
                  "-m", "function:paying_model:respond", "--model-option", "tools=true", "--store", str(tmp_path / "s.db"), "--thread", "t"]

    def run(*more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*statebound, *more], env=env, capture_output=True, text=True, timeout=120)

    assert run("--task", "pay").returncode == -9  # killed inside pay, after paying
    asked = run("--resume")
    assert asked.returncode == 3, asked.stdout + asked.stderr
    assert "tool 'pay' was interrupted while it ran and is not safe to run twice" in asked.stdout
    done = run("--resume", "--input", "skip")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "paid").read_text().splitlines() == ["paid 5"]  # paid once
    assert (tmp_path / "paid.asked").read_text().splitlines() == ["user", "tool"]  # each reply asked once
