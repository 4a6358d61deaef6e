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

Used by ``benchmarks/live_flows.py`` (20 runs) and ``tests/flow/test_live_kill.py`` (a few).
"""

from __future__ import annotations

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
MODEL_FILE = textwrap.dedent('''
    import os
    import time


    def respond(request):
        prompt = request.messages[-1].content.splitlines()[-1]   # "Act at turn 7"
        with open(os.environ["CALL_LOG"], "a") as log:
            log.write(prompt + "\\n")
        time.sleep(0.01)
        turn = int(prompt.rsplit(" ", 1)[1])
        return "done" if turn >= TURNS - 1 else f"reply to {prompt}"
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

    def __init__(self, work: Path) -> None:
        self.work = work
        work.mkdir(parents=True, exist_ok=True)
        (work / "kill_flow.py").write_text(FLOW_FILE)
        (work / "kill_model.py").write_text(MODEL_FILE)
        self.count = 0
        reference = self._start("reference")
        if reference.wait(timeout=300) != 0:
            raise RuntimeError(f"the uninterrupted run failed: {reference.stderr.read() if reference.stderr else ''}")
        self.reference = self.outcome("reference")

    def _command(self, name: str) -> list[str]:
        return [str(STATEBOUND), "run", f"{self.work / 'kill_flow.py'}:flow", "--model", "function:kill_model:respond",
                "--store", str(self.work / f"{name}.db"), "--thread", "t", "--task", "go"]

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

    def trial(self, rng: random.Random) -> Trial:
        self.count += 1
        name = f"killed-{self.count}"
        child = self._start(name)
        target = rng.randint(1, TURNS - 1)
        deadline = time.monotonic() + 120
        while len(self.calls(name)) < target and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.012))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        before = self.calls(name)
        stored = self.stored_replies(name)
        resumed = self._start(name, "--resume")
        if resumed.wait(timeout=300) != 0:
            raise RuntimeError(f"resume failed: {resumed.stderr.read() if resumed.stderr else ''}")
        again = self.calls(name)[len(before):]
        reasked = len(set(again) & set(before[:stored]))
        in_flight = len(set(again) & set(before[stored:]))
        return Trial(len(before), stored, reasked, in_flight, self.outcome(name) == self.reference)
