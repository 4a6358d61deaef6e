"""kill -9 ``statebound serve`` at random points while it runs flows, restart it, and check that
every accepted run finishes, nothing that must not run twice ran twice, and no reply the model
gave was asked for again.

Each trial starts runs in the background on a fresh server over SQLite: ``shop`` threads (the
model asks for a payment, ``tool(pay, repeatable=False)``, 30 ms inside it; the model takes 40 ms)
and ``approve``
threads (the model writes a draft, then the flow pauses for a person). After a random delay the
server is killed with SIGKILL and started again; the test then waits for every run it had
accepted, and answers what the threads ask as a person would: ``yes`` to a draft; about an
interrupted payment, ``skip`` when the payment log shows it went through, ``repeat`` when not.

    .venv/bin/python benchmarks/serve_kill.py [--kills 20] [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import textwrap
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import httpx

FLOWS = textwrap.dedent('''
    import os
    import time

    from statebound.flow import AskHuman, CallLLM, Flow, Instruction, State, always, called, contains, tool


    def pay(ctx, amount: int) -> str:
        """Pay an amount."""
        time.sleep(0.03)
        with open(os.environ["PAID_LOG"], "a") as log:
            log.write(ctx.task + "\\n")
        return f"paid {amount}"


    pay_once = CallLLM(tools=[tool(pay, repeatable=False)])
    shop = Flow(name="shop", initial="Pay", max_turns=4, states=[
        State("Pay", outputs=[Instruction("Pay 5."), pay_once], transitions=[(called(), "Answer"), (always(), "End")]),
        State("Answer", outputs=[pay_once], transitions=[(contains("done"), "End"), (always(), "Answer")]),
        State("End", final=True),
    ])
    approve = Flow(name="approve", initial="Write", max_turns=4, states=[
        State("Write", outputs=[CallLLM(max_tokens=16)], transitions=[(always(), "Ask")]),
        State("Ask", outputs=[AskHuman("Send it?")], transitions=[(always(), "Sent")]),
        State("Sent", final=True),
    ])
''')
MODEL = textwrap.dedent('''
    import os
    import time

    from statebound.llm.base import Choice, ToolCall


    def respond(request):
        task, last = request.messages[0].content.splitlines()[0], request.messages[-1]
        with open(os.environ["MODEL_LOG"], "a") as log:
            log.write(f"{task} | {last.role}\\n")
        time.sleep(0.04)
        if request.tools:
            if last.role == "tool":
                return "done"
            return Choice(text="", tool_calls=(ToolCall("p1", "pay", '{"amount": 5}'),))
        return "Hello"
''')
STATEBOUND = Path(sys.executable).with_name("statebound")


@dataclass(frozen=True)
class Trial:
    accepted: int  # runs the server accepted before the kill
    cut_off: int  # of those, runs still pending or running when it was killed
    finished: int  # of those, runs that finished after the restart
    paid_twice: int  # shop threads that paid more than once (must be 0)
    unpaid: int  # shop threads that never paid (must be 0: a skipped payment had gone through)
    reasked: int  # replies asked for again beyond the one in flight per thread (must be 0)
    asked_about_payment: int  # resumes that asked repeat or skip


class Server:
    def __init__(self, work: Path) -> None:
        self.work, self.port = work, _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "PAID_LOG": str(self.work / "paid"), "MODEL_LOG": str(self.work / "model"),
               "PYTHONPATH": os.pathsep.join([str(self.work), os.environ.get("PYTHONPATH", "")])}
        command = [str(STATEBOUND), "serve", f"{self.work / 'kill_flows.py'}:shop", f"{self.work / 'kill_flows.py'}:approve",
                   "-m", "function:kill_model:respond", "--model-option", "tools=true", "--store",
                   str(self.work / "serve.db"), "--port", str(self.port), "--lease", "2"]
        with open(self.work / "serve.log", "ab") as log:
            self.process = subprocess.Popen(command, env=env, stdout=log, stderr=log)
        for _ in range(600):
            try:
                httpx.get(f"{self.url}/ok", timeout=1)
                return
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError("the server did not start")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def trial(rng: random.Random, work: Path, runs: int = 8) -> Trial:
    work.mkdir(parents=True)
    (work / "kill_flows.py").write_text(FLOWS)
    (work / "kill_model.py").write_text(MODEL)
    server = Server(work)
    server.start()
    accepted: list[tuple[str, dict]] = []

    def submit(number: int) -> None:
        flow = "shop" if number % 2 == 0 else "approve"
        try:
            made = httpx.post(f"{server.url}/runs", json={"assistant_id": flow, "on_completion": "keep",
                                                          "input": {"task": f"{flow} {number}"}})
        except httpx.HTTPError:
            return  # the kill came first: not accepted
        if made.status_code == 200:
            accepted.append((flow, made.json()))

    submitters = [threading.Thread(target=submit, args=(n,)) for n in range(runs)]
    for submitter in submitters:
        submitter.start()
    deadline = time.monotonic() + 30
    while not accepted and time.monotonic() < deadline:
        time.sleep(0.002)
    time.sleep(rng.uniform(0, 0.2))  # while runs are accepted, run their model or pay
    server.kill()
    for submitter in submitters:
        submitter.join()
    with sqlite3.connect(work / "serve.db") as db:
        cut_off = db.execute("SELECT count(*) FROM statebound_runs WHERE status IN ('pending', 'running')").fetchone()[0]
    server.start()
    asked = 0
    finished = 0
    for flow, run in accepted:
        thread, run_id = run["thread_id"], run["run_id"]
        values = httpx.get(f"{server.url}/threads/{thread}/runs/{run_id}/join", timeout=120).json()
        finished += values is not None and "status" in values
        while values.get("__interrupt__"):
            question = values["__interrupt__"][0]["value"]
            if "pay" in question:
                asked += 1
                paid = (work / "paid").read_text().splitlines() if (work / "paid").exists() else []
                answer = "skip" if values["task"] in paid else "repeat"
            else:
                answer = "yes"
            values = httpx.post(f"{server.url}/threads/{thread}/runs/wait", timeout=120,
                                json={"assistant_id": flow, "command": {"resume": answer}}).json()
    server.process.terminate()  # type: ignore[union-attr]
    server.process.wait()  # type: ignore[union-attr]
    paid = Counter((work / "paid").read_text().splitlines()) if (work / "paid").exists() else Counter()
    shops = [run["kwargs"]["task"] for flow, run in accepted if flow == "shop"]  # the accepted ones
    calls = Counter((work / "model").read_text().splitlines()) if (work / "model").exists() else Counter()
    in_flight = len(accepted)  # at most one call per thread was cut off by the kill
    reasked = max(0, sum(count - 1 for count in calls.values()) - in_flight)
    return Trial(len(accepted), cut_off, finished, sum(paid[s] > 1 for s in shops), sum(paid[s] == 0 for s in shops),
                 reasked, asked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="serve-kill-") as tmp:
        trials = [trial(rng, Path(tmp) / f"t{n}") for n in range(args.kills)]
    for number, found in enumerate(trials, 1):
        print(number, found)
    print(f"{len(trials)} kills: {sum(t.accepted for t in trials)} runs accepted ({sum(t.cut_off for t in trials)} "
          f"cut off by the kill), {sum(t.finished for t in trials)} "
          f"finished after the restart; payments made twice {sum(t.paid_twice for t in trials)}, never made "
          f"{sum(t.unpaid for t in trials)}; replies asked again beyond the one in flight "
          f"{sum(t.reasked for t in trials)}; resumes that asked about a payment {sum(t.asked_about_payment for t in trials)}")


if __name__ == "__main__":
    main()
