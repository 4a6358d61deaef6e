"""kill -9 a stored flow at a random point, resume it, and check what the resume did.

A 30-turn flow runs as ``statebound run ... --store DB --thread t`` in a child process with a
model (``function:kill_model:respond``) that logs every call it gets to a file and takes 10 ms
per call. The parent kills the child with SIGKILL after a random number of calls (plus a random
few milliseconds, so kills land inside calls as well as between them), reads how many replies
the store holds, then runs the same command with ``--resume`` and compares:

* ``reasked``: calls whose reply was checkpointed before the kill and that were made again
  (must be 0: a checkpointed reply is never asked for twice);
* ``in_flight``: the call that was running when the process died and had no checkpoint yet
  (0 or 1: it runs again, as documented);
* ``same``: the resumed run's history and trajectory equal an uninterrupted run's.

With model-called tools (:class:`ToolHarness`, ``--tools``): a 10-turn flow whose model asks, in
each reply, for two tools: ``note`` (repeatable) and ``pay`` (``tool(pay, repeatable=False)``),
each logging its start and its end with a few milliseconds between (3 and 8). Kills land inside the model's
calls, inside either tool and between them. After the kill the thread is resumed; when it pauses to
ask about an interrupted ``pay`` the answer is what a person would give (``skip`` when the log
shows that payment ended, ``repeat`` when it did not), until the run ends. Each trial counts:

* ``reasked``: stored replies asked for again (must be 0);
* ``paid_twice``: payments that ended twice (must be 0);
* ``unasked``: payments started again with nobody asked (must be 0);
* ``asked``: pauses that asked about an interrupted payment;
* ``same``: the final history equals an uninterrupted run's, wherever no payment was skipped.

Used by ``benchmarks/live_flows.py`` (20 runs of each) and ``tests/flow/test_live_kill.py`` (a few).

    .venv/bin/python benchmarks/kill_resume.py [--tools] [--kills 20]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

TURNS = 30
FLOW_FILE = textwrap.dedent('''
    from statebound.flow import CallLLM, Flow, Instruction, State, always, contains

    NAMES = ["Plan", "Act", "Observe"]


    def step(name):
        return Instruction(lambda ctx: f"{name} at turn {ctx.turn}")


    flow = Flow(name="kill-me", initial="Plan", max_turns=TURNS + 1, states=[
        *(State(name, outputs=[step(name), CallLLM(max_tokens=8)],
                transitions=[(contains("done"), "End"), (always(), NAMES[(i + 1) % len(NAMES)])])
          for i, name in enumerate(NAMES)),
        State("End", final=True),
    ])
''').replace("TURNS", str(TURNS))
# a model's first lines: it logs each call (the turn it was asked at) and takes 10 ms
LOGGED_CALL = textwrap.dedent('''
    import json
    import os
    import time

    from statebound.llm.base import Choice, ToolCall


    def respond(request):
        prompt = request.messages[-1].content.splitlines()[-1]   # "Act at turn 7"
        with open(os.environ["CALL_LOG"], "a") as log:
            log.write(prompt + "\\n")
        time.sleep(0.01)
        turn = int(prompt.rsplit(" ", 1)[1])
''')
MODEL_FILE = (LOGGED_CALL + '''    return "done" if turn >= TURNS - 1 else f"reply to {prompt}"
''').replace("TURNS", str(TURNS))
STATEBOUND = Path(sys.executable).with_name("statebound")


@dataclass(frozen=True)
class Trial:
    killed_after: int  # calls logged when the process died
    stored: int  # replies the store held then
    reasked: int  # stored replies asked for again on resume (must be 0)
    in_flight: int  # the call running at the kill, asked again (0 or 1)
    same: bool  # history and trajectory equal to an uninterrupted run's


class Harness:
    """A work directory with the flow and model files, and the uninterrupted reference run."""

    FLOW, MODEL, MODEL_OPTIONS = FLOW_FILE, MODEL_FILE, ()

    def __init__(self, work: Path) -> None:
        self.work = work
        work.mkdir(parents=True, exist_ok=True)
        (work / "kill_flow.py").write_text(self.FLOW)
        (work / "kill_model.py").write_text(self.MODEL)
        self.count = 0
        reference = self._start("reference")
        if reference.wait(timeout=300) != 0:
            raise RuntimeError(f"the uninterrupted run failed: {reference.stderr.read() if reference.stderr else ''}")
        self.reference = self.outcome("reference")

    def _command(self, name: str) -> list[str]:
        return [str(STATEBOUND), "run", f"{self.work / 'kill_flow.py'}:flow", "--model", "function:kill_model:respond",
                *self.MODEL_OPTIONS, "--store", str(self.work / f"{name}.db"), "--thread", "t", "--task", "go"]

    def _start(self, name: str, *extra: str) -> subprocess.Popen[bytes]:
        env = {**os.environ, "CALL_LOG": str(self.log(name)), "STATEBOUND_CONFIG": str(self.work / "none.toml"),
               "PYTHONPATH": os.pathsep.join([str(self.work), os.environ.get("PYTHONPATH", "")])}
        return subprocess.Popen([*self._command(name), *extra], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)

    def log(self, name: str) -> Path:
        return self.work / f"{name}.calls"

    def calls(self, name: str) -> list[str]:
        path = self.log(name)
        return path.read_text().splitlines() if path.exists() else []

    def outcome(self, name: str) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
        """The stored thread's history (source, text) and trajectory."""
        from statebound.flow.live import SQLiteCheckpointer

        spec = importlib.util.spec_from_file_location(f"kill_flow_{name}", self.work / "kill_flow.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        with SQLiteCheckpointer(self.work / f"{name}.db") as store:
            result = module.flow.resume_sync("t", checkpointer=store)
        return tuple((e.source, e.content) for e in result.history), result.trajectory

    def stored_replies(self, name: str) -> int:
        from statebound.flow.live import SQLiteCheckpointer

        with SQLiteCheckpointer(self.work / f"{name}.db") as store:
            return sum(e.source == "llm" for point in store.checkpoints("t") for e in point.added)

    def kill_after(self, name: str, *, target: int, then: float, poll: float) -> None:
        """Start run ``name``, wait until it has logged ``target`` model calls (or ended), wait
        ``then`` seconds more, and kill it with SIGKILL."""
        child = self._start(name)
        deadline = time.monotonic() + 120
        while len(self.calls(name)) < target and child.poll() is None and time.monotonic() < deadline:
            time.sleep(poll)
        time.sleep(then)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)

    def trial(self, rng: random.Random) -> Trial:
        self.count += 1
        name = f"killed-{self.count}"
        self.kill_after(name, target=rng.randint(1, TURNS - 1), then=rng.uniform(0, 0.012), poll=0.002)
        before = self.calls(name)
        stored = self.stored_replies(name)
        resumed = self._start(name, "--resume")
        if resumed.wait(timeout=300) != 0:
            raise RuntimeError(f"resume failed: {resumed.stderr.read() if resumed.stderr else ''}")
        again = self.calls(name)[len(before):]
        reasked = len(set(again) & set(before[:stored]))
        in_flight = len(set(again) & set(before[stored:]))
        return Trial(len(before), stored, reasked, in_flight, self.outcome(name) == self.reference)


TOOL_TURNS = 10
TOOL_FLOW_FILE = textwrap.dedent('''
    import os
    import time

    from statebound.flow import CallLLM, Flow, Instruction, State, always, contains, tool


    def _log(line):
        with open(os.environ["TOOL_LOG"], "a") as log:
            log.write(line + "\\n")


    def note(turn: int) -> str:
        """Write a note."""
        _log(f"note {turn} start")
        time.sleep(0.003)
        _log(f"note {turn} end")
        return f"noted {turn}"


    def pay(turn: int) -> str:
        """Pay for a turn."""
        _log(f"pay {turn} start")
        time.sleep(0.008)
        _log(f"pay {turn} end")
        return f"paid {turn}"


    act = CallLLM(max_tokens=8, tools=[note, tool(pay, repeatable=False)])
    flow = Flow(name="pay-me", initial="Act", max_turns=TURNS + 2, states=[
        State("Act", outputs=[Instruction(lambda ctx: f"Act at turn {ctx.turn}"), act],
              transitions=[(contains("done"), "End"), (always(), "Act")]),
        State("End", final=True),
    ])
''').replace("TURNS", str(TOOL_TURNS))
TOOL_MODEL_FILE = (LOGGED_CALL + '''    if turn >= TURNS - 1:
        return "done"
    args = json.dumps({"turn": turn})
    return Choice(text="", tool_calls=(ToolCall(f"n{turn}", "note", args), ToolCall(f"p{turn}", "pay", args)))
''').replace("TURNS", str(TOOL_TURNS))


@dataclass(frozen=True)
class ToolTrial:
    killed_after: int  # model calls logged when the process died
    reasked: int  # stored replies asked for again (must be 0)
    paid_twice: int  # payments that ended twice (must be 0)
    unasked: int  # payments started again without asking (must be 0)
    asked: int  # pauses asking about an interrupted payment
    same: bool  # the final history equals an uninterrupted run's (when nothing was skipped)
    landed: str  # where the kill landed: "model", "note" or "pay" (the last thing started)


class ToolHarness(Harness):
    """:class:`Harness` for the flow whose model calls a repeatable and a non-repeatable tool."""

    FLOW, MODEL, MODEL_OPTIONS = TOOL_FLOW_FILE, TOOL_MODEL_FILE, ("--model-option", "tools=true")

    def _start(self, name: str, *extra: str) -> subprocess.Popen[bytes]:
        os.environ["TOOL_LOG"] = str(self.tool_log(name))
        return super()._start(name, *extra)

    def tool_log(self, name: str) -> Path:
        return self.work / f"{name}.tools"

    def tools(self, name: str) -> list[str]:
        path = self.tool_log(name)
        return path.read_text().splitlines() if path.exists() else []

    def stored_replies(self, name: str) -> int:
        from statebound.flow.live import SQLiteCheckpointer

        with SQLiteCheckpointer(self.work / f"{name}.db") as store:
            return sum(e.source == "llm" for point in store.checkpoints("t") for e in point.added)

    def trial(self, rng: random.Random) -> ToolTrial:  # type: ignore[override]
        self.count += 1
        name = f"killed-{self.count}"
        # into the model's call, a tool, or between them
        self.kill_after(name, target=rng.randint(1, TOOL_TURNS - 1), then=rng.uniform(0, 0.03), poll=0.001)
        before, stored = self.calls(name), self.stored_replies(name)
        tools = self.tools(name)
        tools_before = len(tools)
        last_tool = tools[-1] if tools else "model end"
        landed = last_tool.split()[0] if last_tool.endswith(" start") else "model"
        asked = skipped = 0
        answer: tuple[str, ...] = ()
        while True:
            resumed = self._start(name, "--resume", *answer)
            code = resumed.wait(timeout=300)
            if code == 0:
                break
            if code != 3:
                raise RuntimeError(f"resume failed ({code}): {resumed.stderr.read() if resumed.stderr else ''}")
            asked += 1  # paused: was the interrupted payment made? a person would check
            payments = [line for line in self.tools(name) if line.startswith("pay ")]
            ended = payments[-1].endswith(" end")
            skipped += ended
            answer = ("--input", "skip" if ended else "repeat")
        again = self.calls(name)[len(before):]
        log = self.tools(name)
        ends = [line for line in log if line.startswith("pay ") and line.endswith(" end")]
        restarted = [line for line in log[tools_before:] if line.startswith("pay ") and line.endswith(" start")]
        unasked = sum(1 for line in restarted if line in log[:tools_before]) - (asked - skipped)
        return ToolTrial(len(before), len(set(again) & set(before[:stored])), len(ends) - len(set(ends)),
                         max(unasked, 0), asked, skipped > 0 or self.outcome(name) == self.reference, landed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", action="store_true", help="the flow whose model calls tools")
    parser.add_argument("--kills", type=int, default=20, help="trials")
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args()
    import tempfile

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="kill-resume-") as tmp:
        harness = ToolHarness(Path(tmp)) if args.tools else Harness(Path(tmp))
        trials = [harness.trial(rng) for _ in range(args.kills)]
    for number, trial in enumerate(trials, 1):
        print(number, trial)
    if args.tools:
        tool_trials = [t for t in trials if isinstance(t, ToolTrial)]
        print(f"{len(trials)} kills: replies asked again {sum(t.reasked for t in tool_trials)}, payments ended "
              f"twice {sum(t.paid_twice for t in tool_trials)}, payments re-run unasked "
              f"{sum(t.unasked for t in tool_trials)}, asked about {sum(t.asked for t in tool_trials)}, "
              f"ended as an uninterrupted run {sum(t.same for t in tool_trials)}/{len(trials)}; kills landed in "
              f"the model's call or between steps {sum(t.landed == 'model' for t in tool_trials)}, in note "
              f"{sum(t.landed == 'note' for t in tool_trials)}, in pay {sum(t.landed == 'pay' for t in tool_trials)}")


if __name__ == "__main__":
    main()
