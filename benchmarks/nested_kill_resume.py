"""kill -9 a stored flow with a sub-machine and three parallel branches (one pausing for a person,
one paying through a tool that must not run twice), resume it, and compare with an uninterrupted run.

The flow (written to a work directory, run by a driver script in a child process):

    Plan (model) -> Summarise: Sub(summary: two model calls) -> Branches: Parallel(
        a: Sub(search "a"), b: Sub(search "b"), c: Sub(approve: model -> AskHuman -> pay, not repeatable)
    ) -> Finish (model) -> End

The model (``function:`` double) logs every call and takes 20 ms; ``pay`` logs its start and end
with 30 ms between. The driver runs the thread to its end, answering each pause as a person would
(``yes`` to the approval; about an interrupted payment ``skip`` when the log shows it ended,
``repeat`` when it did not), and prints the final variables as JSON. A trial starts the driver,
kills it with SIGKILL after a random number of model calls plus a random few milliseconds, then
runs the driver again on the same thread and counts:

* ``same``: the final variables equal the uninterrupted run's;
* ``paid_twice``: payments that ended twice (must be 0);
* ``unasked``: payments started again without a person asked (must be 0);
* ``reasked``: model calls whose reply was stored before the kill (in the thread or any of its
  children's) and that were made again (must be 0);
* ``repeated``: model calls made again (only those cut off by the kill may be: at most one per
  branch running then);
* ``asked``: pauses about an interrupted payment.

    PYTHONPATH=src .venv/bin/python benchmarks/nested_kill_resume.py [--kills 20] [--store URL]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

FLOW_FILE = textwrap.dedent('''
    import os
    import time
    from dataclasses import dataclass, field

    from statebound.flow import (AskHuman, CallLLM, CallTool, Flow, Instruction, Parallel, State, Sub, Update,
                                 always, append)


    @dataclass(frozen=True)
    class Job:
        notes: list[str] = field(default_factory=list)
        summary: str = ""
        approved: str = ""
        final: str = ""


    @dataclass(frozen=True)
    class Part:
        note: str = ""
        approved: str = ""


    def ask(text):
        return [Instruction(text), CallLLM(max_tokens=8)]


    def last_reply(name):
        return Update(lambda ctx: {name: ctx.last_of("llm").content}, writes=[name])


    def pay(ctx):
        with open(os.environ["TOOL_LOG"], "a") as log:
            log.write("pay start\\n")
        time.sleep(0.03)
        with open(os.environ["TOOL_LOG"], "a") as log:
            log.write("pay end\\n")
        return "paid"


    def search(topic):
        return Flow(name=f"search-{topic}", initial="Look", vars=Part, states=[
            State("Look", outputs=ask(f"look up {topic}"), transitions=[(always(), "Read")]),
            State("Read", outputs=[*ask(f"read about {topic}"), last_reply("note")], transitions=[(always(), "Done")]),
            State("Done", final=True),
        ])


    summary = Flow(name="summary", initial="Draft", vars=Part, states=[
        State("Draft", outputs=ask("draft the summary"), transitions=[(always(), "Edit")]),
        State("Edit", outputs=[*ask("edit the summary"), last_reply("note")], transitions=[(always(), "Done")]),
        State("Done", final=True),
    ])
    approve = Flow(name="approve", initial="Propose", vars=Part, states=[
        State("Propose", outputs=ask("propose the payment"), transitions=[(always(), "Ask")]),
        State("Ask", outputs=[AskHuman("Approve the payment?"),
                              Update(lambda ctx: {"approved": ctx.last_of("human").content}, writes=["approved"]),
                              CallTool(pay, repeatable=False)],
              transitions=[(always(), "Done")]),
        State("Done", final=True),
    ])
    branches = Parallel({"a": Sub(search("a"), vars_out={"notes": "note"}),
                         "b": Sub(search("b"), vars_out={"notes": "note"}),
                         "c": Sub(approve, vars_out={"approved": "approved"})}, merge={"notes": append})
    flow = Flow(name="nested-kill", initial="Plan", vars=Job, max_turns=30, states=[
        State("Plan", outputs=ask("plan the job"), transitions=[(always(), "Summarise")]),
        State("Summarise", outputs=[Sub(summary, vars_out={"summary": "note"})], transitions=[(always(), "Branches")]),
        State("Branches", outputs=[branches], transitions=[(always(), "Finish")]),
        State("Finish", outputs=[*ask("finish the job"), last_reply("final")], transitions=[(always(), "End")]),
        State("End", final=True),
    ])
''')
MODEL_FILE = textwrap.dedent('''
    import asyncio
    import os


    async def respond(request):
        prompt = request.messages[-1].content.splitlines()[-1]
        with open(os.environ["CALL_LOG"], "a") as log:
            log.write(prompt + "\\n")
        await asyncio.sleep(0.02)
        return f"done: {prompt}"
''')
DRIVER_FILE = textwrap.dedent('''
    import dataclasses
    import json
    import os
    import sys

    from statebound.flow import ExitReason, questions
    from statebound.flow.live import open_checkpointer
    from statebound.llm.testing import FunctionLLM

    from kill_model import respond
    from nested_flow import flow


    def answer(question):
        if "interrupted" in question:  # a person checks whether the payment went through
            path = os.environ["TOOL_LOG"]
            log = open(path).read().split() if os.path.exists(path) else []
            return "skip" if log and log[-1] == "end" else "repeat"
        return "yes"


    store, thread = sys.argv[1], sys.argv[2]
    llm = FunctionLLM(respond)
    with open_checkpointer(store) as checkpointer:
        if any(info.thread == thread for info in checkpointer.threads()):
            result = flow.resume_sync(thread, checkpointer=checkpointer, llm=llm)
        else:
            result = flow.run_sync("do the job", llm=llm, checkpointer=checkpointer, thread=thread)
        asked = 0
        while result.exit_reason is ExitReason.PAUSED:
            waiting = questions(result)
            asked += sum("interrupted" in q for q in waiting.values())
            result = flow.resume_sync(thread, checkpointer=checkpointer, llm=llm,
                                      input={pause: answer(q) for pause, q in waiting.items()})
    print(json.dumps({"reason": result.exit_reason.value, "vars": dataclasses.asdict(result.vars), "asked": asked,
                      "error": repr(result.error)}))
''')


@dataclass(frozen=True)
class Trial:
    killed_after: int  # model calls logged when the process died
    same: bool  # the final variables equal the uninterrupted run's
    paid_twice: int  # payments that ended twice (must be 0)
    unasked: int  # payments started again with no person asked (must be 0)
    reasked: int  # calls whose reply was stored, made again (must be 0)
    repeated: int  # model calls made again (cut off by the kill)
    asked: int  # pauses about an interrupted payment


class NestedHarness:
    """A work directory with the flow, model and driver files, a store (a folder for SQLite files,
    or a PostgreSQL URL) and the uninterrupted reference run."""

    def __init__(self, work: Path, store: str | None = None) -> None:
        self.work, self.store, self.count = work, store, 0
        work.mkdir(parents=True, exist_ok=True)
        for name, text in (("nested_flow.py", FLOW_FILE), ("kill_model.py", MODEL_FILE), ("driver.py", DRIVER_FILE)):
            (work / name).write_text(text)
        self.reference = self._finish("reference")
        self.calls = len(self.log("reference", "calls"))

    def log(self, name: str, kind: str) -> list[str]:
        path = self.work / f"{name}.{kind}"
        return path.read_text().splitlines() if path.exists() else []

    def _start(self, name: str) -> subprocess.Popen[bytes]:
        env = {**os.environ, "CALL_LOG": str(self.work / f"{name}.calls"), "TOOL_LOG": str(self.work / f"{name}.tools"),
               "PYTHONPATH": os.pathsep.join([str(self.work), os.environ.get("PYTHONPATH", "")])}
        store = self.store or str(self.work / f"{name}.db")
        return subprocess.Popen([sys.executable, str(self.work / "driver.py"), store, name], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def _finish(self, name: str) -> dict[str, object]:
        child = self._start(name)
        out, err = child.communicate(timeout=300)
        if child.returncode != 0:
            raise RuntimeError(f"run {name} failed: {err.decode()[-2000:]}")
        outcome: dict[str, object] = json.loads(out.decode().splitlines()[-1])
        return outcome

    def trial(self, rng: random.Random) -> Trial:
        self.count += 1
        name = f"killed-{self.count}"
        child = self._start(name)
        target, deadline = rng.randint(1, self.calls - 1), time.monotonic() + 120
        while len(self.log(name, "calls")) < target and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.03))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        killed_after, tools_before = len(self.log(name, "calls")), len(self.log(name, "tools"))
        stored = self.stored_prompts(name)
        outcome = self._finish(name)
        tools = self.log(name, "tools")
        restarted = sum(line == "pay start" for line in tools[tools_before:])
        asked = int(str(outcome["asked"]))
        calls = Counter(self.log(name, "calls"))
        again = set(self.log(name, "calls")[killed_after:])
        return Trial(killed_after, outcome["vars"] == self.reference["vars"] and outcome["reason"] == "final",
                     max(0, tools.count("pay end") - 1), max(0, restarted - asked if tools_before else 0),
                     len(again & stored), sum(n - 1 for n in calls.values()), asked)

    def stored_prompts(self, name: str) -> set[str]:
        """The prompts whose replies the thread ``name`` and its children had stored."""
        from statebound.flow.live import open_checkpointer

        with open_checkpointer(self.store or str(self.work / f"{name}.db")) as store:
            threads = [info.thread for info in store.threads() if info.thread.split("/")[0] == name]
            return {entry.content.removeprefix("done: ") for thread in threads for point in store.checkpoints(thread)
                    for entry in point.added if entry.source == "llm"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20, help="trials")
    parser.add_argument("--seed", type=int, default=53)
    parser.add_argument("--store", help="a postgresql:// URL (default: a SQLite file per trial)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="nested-kill-") as tmp:
        harness = NestedHarness(Path(tmp), args.store)
        trials = [harness.trial(rng) for _ in range(args.kills)]
    for number, trial in enumerate(trials, 1):
        print(number, trial)
    print(f"{len(trials)} kills over {harness.calls} model calls: same final vars {sum(t.same for t in trials)}/"
          f"{len(trials)}, payments ended twice {sum(t.paid_twice for t in trials)}, re-run unasked "
          f"{sum(t.unasked for t in trials)}, asked about {sum(t.asked for t in trials)}, stored replies asked again "
          f"{sum(t.reasked for t in trials)}, model calls made again "
          f"{sum(t.repeated for t in trials)} (at most one per branch running at the kill)")


if __name__ == "__main__":
    main()
