"""A server killed with kill -9 loses no accepted run: restarted, it finishes them, repeating
nothing but the call in flight; a payment the model asked for, cut off inside, is not made again
without asking. Two workers over one PostgreSQL store run each of 200 runs exactly once."""

from __future__ import annotations

import asyncio
import os
import time

import httpx
import pytest
from server import serving

pytestmark = pytest.mark.integration
langgraph_sdk = pytest.importorskip("langgraph_sdk")


def test_killed_inside_a_payment_the_restarted_server_asks_before_paying_again(tmp_path):
    env = {"PAID_LOG": str(tmp_path / "paid"), "MODEL_LOG": str(tmp_path / "model")}
    (tmp_path / "paid.die").write_text("die inside the payment, once")
    with serving(str(tmp_path / "s.db"), "--lease", "2", env=env) as server:
        thread = httpx.post(f"{server.url}/threads", json={}).json()["thread_id"]
        accepted = httpx.post(f"{server.url}/threads/{thread}/runs", json={"assistant_id": "shop",
                                                                         "input": {"task": "buy"}}).json()
        server.process.wait(timeout=30)  # it killed itself inside pay, after paying
        assert (tmp_path / "paid").read_text() == "paid 5\n"
        server.start()  # restarted: the accepted run is taken up again

        async def go():
            sdk = langgraph_sdk.get_client(url=server.url)
            asked = await sdk.runs.join(thread, accepted["run_id"])
            done = await sdk.runs.wait(thread, "shop", command={"resume": "skip"})
            return asked, done

        asked, done = asyncio.run(go())
    assert "tool 'pay' was interrupted while it ran and is not safe to run twice" in asked["__interrupt__"][0]["value"]
    assert done["status"] == "final"
    assert (tmp_path / "paid").read_text() == "paid 5\n"  # paid once
    assert (tmp_path / "model").read_text().splitlines() == [  # each reply asked for once
        "user: buy |  | Pay 5.", "tool: Error: pay was interrupted and not run again"]


def test_every_run_accepted_before_a_kill_finishes_after_the_restart(tmp_path):
    with serving(str(tmp_path / "s.db"), "--lease", "2") as server:
        threads = [httpx.post(f"{server.url}/threads", json={}).json()["thread_id"] for _ in range(6)]
        runs = [httpx.post(f"{server.url}/threads/{t}/runs", json={"assistant_id": "slow", "input": {"task": "1"}}).json()
                for t in threads]
        time.sleep(0.3)
        server.kill()  # while every run naps
        server.start()
        finished = [httpx.get(f"{server.url}/threads/{r['thread_id']}/runs/{r['run_id']}/join", timeout=60).json()
                    for r in runs]
        statuses = [httpx.get(f"{server.url}/threads/{r['thread_id']}/runs/{r['run_id']}").json()["status"] for r in runs]
    assert [f["status"] for f in finished] == ["final"] * 6
    assert statuses == ["success"] * 6


@pytest.mark.slow
def test_two_workers_over_postgresql_run_each_of_200_runs_exactly_once(postgres_url, tmp_path):
    import psycopg

    log = tmp_path / "model"
    with serving(postgres_url, "--workers", "2", env={"MODEL_LOG": str(log)}) as server:
        seen: set[str] = set()
        deadline = time.monotonic() + 30
        while len(seen) < 2 and time.monotonic() < deadline:  # both workers up: each new connection may land on either
            seen.add(httpx.get(f"{server.url}/info").json()["worker"])

        async def go():
            gate = asyncio.Semaphore(20)
            fresh = httpx.Limits(max_keepalive_connections=0)  # a new connection a run: the workers share them
            async with httpx.AsyncClient(base_url=server.url, limits=fresh, timeout=120) as raw:
                async def one(number: int) -> dict:
                    async with gate:
                        answer = await raw.post("/runs/wait", json={"assistant_id": "approve", "on_completion": "keep",
                                                                    "input": {"task": f"task {number}"}})
                        return answer.json()

                return await asyncio.gather(*(one(n) for n in range(200)))

        answers = asyncio.run(go())
    with psycopg.connect(postgres_url) as db:
        runs = db.execute("SELECT status, worker FROM statebound_runs").fetchall()
    assert len(seen) == 2
    assert len(log.read_text().splitlines()) == 200  # each run's model call made once
    assert sorted(a["task"] for a in answers) == sorted(f"task {n}" for n in range(200))
    assert all(a["__interrupt__"][0]["value"] == "Send 'Hello Ann' (plain)?" for a in answers)
    assert len(runs) == 200 and {status for status, _ in runs} == {"success"}
    assert len({worker for _, worker in runs}) == 2  # both workers ran runs


def test_killed_at_random_points_every_accepted_run_finishes_once(tmp_path):
    """benchmarks/serve_kill.py (20 kills there) on a few kills."""
    import importlib.util
    import random
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "serve_kill.py"
    spec = importlib.util.spec_from_file_location("serve_kill", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    rng = random.Random(3)
    trials = [module.trial(rng, tmp_path / f"t{n}") for n in range(3)]
    assert sum(t.cut_off for t in trials) > 0  # the kills landed while runs went on
    for trial in trials:
        assert trial.finished == trial.accepted, trial
        assert (trial.paid_twice, trial.unpaid, trial.reasked) == (0, 0, 0), trial


@pytest.mark.slow
def test_a_stuck_workers_run_goes_to_another_worker_once_its_claim_runs_out(postgres_url, tmp_path):
    import signal

    import psycopg

    with serving(postgres_url, "--workers", "2", "--lease", "1") as server:
        run = httpx.post(f"{server.url}/runs", json={"assistant_id": "slow", "input": {"task": "2"},
                                                     "on_completion": "keep"}).json()
        with psycopg.connect(postgres_url) as db:
            holder = db.execute("SELECT worker FROM statebound_runs WHERE run_id = %s", (run["run_id"],)).fetchone()[0]
        stuck = int(holder.split(":")[1])
        other = _connected_to_another_worker(server.url, holder)  # the stuck one answers nobody
        os.kill(stuck, signal.SIGSTOP)  # stuck mid-nap: alive, holding the thread, renewing nothing
        try:
            joined = other.get(f"/threads/{run['thread_id']}/runs/{run['run_id']}/join").json()
        finally:
            os.kill(stuck, signal.SIGCONT)
            other.close()
        time.sleep(2)  # the stuck worker wakes, finds the run taken, and stops it without writing
        with psycopg.connect(postgres_url) as db:
            status, worker = db.execute("SELECT status, worker FROM statebound_runs WHERE run_id = %s",
                                        (run["run_id"],)).fetchone()
            seqs = [row[0] for row in db.execute("SELECT seq FROM statebound_checkpoints WHERE thread = %s ORDER BY seq",
                                                 (run["thread_id"],)).fetchall()]
    assert joined["status"] == "final" and status == "success" and worker != holder
    assert seqs == list(range(len(seqs)))  # one writer at a time: the thread is whole


def _connected_to_another_worker(url: str, worker: str) -> httpx.Client:
    """A client whose kept-alive connection a worker other than ``worker`` serves (the system gives
    each new connection to either worker)."""
    for _ in range(100):
        client = httpx.Client(base_url=url, timeout=60)
        if client.get("/info").json()["worker"] != worker:
            return client
        client.close()
    raise AssertionError(f"100 connections in a row went to {worker}")
