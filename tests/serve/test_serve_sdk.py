"""``statebound serve`` driven by the real ``langgraph-sdk`` client (and raw HTTP where the SDK has
no call): threads, runs in the background, wait, stream, an interrupt answered with
Command(resume=...), history, copy, state updates, cancel, a busy thread, reconnecting streams,
and the refusals of bad requests, which store nothing."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from server import serving

pytestmark = pytest.mark.integration
langgraph_sdk = pytest.importorskip("langgraph_sdk")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with serving(str(tmp_path_factory.mktemp("serve") / "serve.db")) as running:
        yield running


def run(coroutine):
    return asyncio.run(coroutine)


def client(server):
    return langgraph_sdk.get_client(url=server.url)


def test_assistants_are_the_served_flows_with_their_schemas(server):
    async def go():
        sdk = client(server)
        found = await sdk.assistants.search()
        schemas = await sdk.assistants.get_schemas("approve")
        graph = await sdk.assistants.get_graph("approve")
        return found, schemas, graph

    found, schemas, graph = run(go())
    assert [a["assistant_id"] for a in found] == ["steps", "approve", "shop", "slow"]
    assert schemas["input_schema"]["properties"]["vars"]["properties"]["tone"]["type"] == "string"
    assert {(e["source"], e["target"]) for e in graph["edges"]} >= {("Write", "Ask"), ("Ask", "Sent")}


def test_a_thread_runs_and_waits_then_its_state_and_history_read_back(server):
    async def go():
        sdk = client(server)
        thread = await sdk.threads.create(metadata={"user": "ann"})
        values = await sdk.runs.wait(thread["thread_id"], "steps", input={"task": "one two three"})
        state = await sdk.threads.get_state(thread["thread_id"])
        history = await sdk.threads.get_history(thread["thread_id"], limit=50)
        found = await sdk.threads.search(metadata={"user": "ann"})
        return values, state, history, found, thread

    values, state, history, found, thread = run(go())
    assert values["status"] == "final" and values["messages"][2]["content"] == "3 words"
    assert values["messages"][2]["type"] == "tool" and values["state"] == "End"
    assert state["values"] == values and state["next"] == []
    assert [h["checkpoint"]["checkpoint_id"] for h in history] == [str(n) for n in range(len(history) - 1, -1, -1)]
    assert [t["thread_id"] for t in found] == [thread["thread_id"]] and found[0]["status"] == "idle"


def test_an_interrupt_is_answered_with_command_resume_while_streaming(server):
    async def go():
        sdk = client(server)
        thread = (await sdk.threads.create())["thread_id"]
        paused = await sdk.runs.wait(thread, "approve", input={"task": "Invite Ann", "vars": {"tone": "warm"}})
        busy = await sdk.threads.get(thread)
        parts = [part async for part in sdk.runs.stream(thread, "approve", command={"resume": "yes"},
                                                         stream_mode=["updates", "values", "custom"])]
        return paused, busy, parts, await sdk.threads.get_state(thread)

    paused, busy, parts, state = run(go())
    (interrupt,) = paused["__interrupt__"]
    assert interrupt["value"] == "Send 'Hello Ann' (warm)?" and busy["status"] == "interrupted"
    assert busy["interrupts"][interrupt["id"]][0]["value"] == interrupt["value"]
    events = [part.event for part in parts]
    assert events[0] == "metadata" and events[-1] == "end" and "updates" in events and "custom" in events
    update = next(part.data for part in parts if part.event == "updates")
    assert update["Ask"]["messages"][0]["content"] == "yes" and update["Ask"]["vars"] == {"approved": True}
    assert state["values"]["vars"] == {"approved": True, "tone": "warm"} and state["values"]["state"] == "Sent"


def test_copy_forks_the_thread_and_a_state_update_sets_variables_checked_against_the_type(server):
    async def go():
        sdk = client(server)
        thread = (await sdk.threads.create())["thread_id"]
        await sdk.runs.wait(thread, "approve", input={"task": "Invite Bob"})
        copy = await sdk.threads.copy(thread)
        updated = await sdk.threads.update_state(copy["thread_id"], {"vars": {"tone": "formal"}})
        async with httpx.AsyncClient(base_url=server.url) as raw:
            refused = await raw.post(f"/threads/{copy['thread_id']}/state", json={"values": {"tone": 3}})
            unknown = await raw.post(f"/threads/{copy['thread_id']}/state", json={"values": {"colour": "red"}})
        answered = await sdk.runs.wait(copy["thread_id"], "approve", command={"resume": "no"})
        original = await sdk.threads.get_state(thread)
        return updated, refused, unknown, answered, original

    updated, refused, unknown, answered, original = run(go())
    assert updated["checkpoint"]["checkpoint_id"].isdigit()
    assert refused.status_code == 422 and "cannot set 'tone' to 3" in refused.json()["detail"]
    assert unknown.status_code == 422 and "no field 'colour'" in unknown.json()["detail"]
    assert answered["__interrupt__"][0]["value"] == "Send 'Hello Ann' (formal)?"  # asked again, in the new tone
    assert original["values"]["vars"]["tone"] == "plain"  # the original thread is left as it was


def test_a_busy_thread_refuses_a_second_run_and_a_cancel_stops_the_first(server):
    async def go():
        sdk = client(server)
        thread = (await sdk.threads.create())["thread_id"]
        first = await sdk.runs.create(thread, "slow", input={"task": "30"})
        await asyncio.sleep(0.5)
        with pytest.raises(httpx.HTTPStatusError) as busy:
            await sdk.runs.create(thread, "slow")
        queued = await sdk.runs.create(thread, "slow", multitask_strategy="enqueue")
        await sdk.runs.cancel(thread, first["run_id"], wait=True)
        cancelled = await sdk.runs.get(thread, first["run_id"])
        for _ in range(100):  # the queued run goes on once the thread is free
            if (await sdk.runs.get(thread, queued["run_id"]))["status"] == "running":
                break
            await asyncio.sleep(0.05)
        started = await sdk.runs.get(thread, queued["run_id"])
        await sdk.runs.cancel(thread, queued["run_id"], wait=True)
        return busy.value.response, cancelled, queued, started

    busy, cancelled, queued, started = run(go())
    assert busy.status_code == 409 and "is busy with run" in busy.json()["detail"]
    assert cancelled["status"] == "interrupted"
    assert queued["status"] == "pending" and started["status"] == "running"  # it waited for the first


def test_a_stream_that_reconnects_with_the_last_event_id_gets_the_rest_not_a_repeat(server):
    async def go():
        sdk = client(server)
        thread = (await sdk.threads.create())["thread_id"]
        run_ = await sdk.runs.create(thread, "steps", input={"task": "a b"}, stream_mode=["events"])
        await sdk.runs.join(thread, run_["run_id"])
        async with httpx.AsyncClient(base_url=server.url) as raw:
            whole = await raw.get(f"/threads/{thread}/runs/{run_['run_id']}/stream")
            rest = await raw.get(f"/threads/{thread}/runs/{run_['run_id']}/stream", headers={"Last-Event-ID": "3"})
        return whole.text, rest.text

    whole, rest = run(go())
    ids = [int(line[4:]) for line in whole.splitlines() if line.startswith("id: ")]
    rest_ids = [int(line[4:]) for line in rest.splitlines() if line.startswith("id: ")]
    assert ids == list(range(1, len(ids) + 1)) and len(ids) > 4
    assert rest_ids == ids[3:]
    assert "event: end" in rest


@pytest.mark.parametrize(("method", "path", "body", "status", "said"), [
    ("POST", "/runs/wait", {"assistant_id": "nope", "input": {"task": "x"}}, 404, "no assistant 'nope'"),
    ("POST", "/threads/missing/runs/wait", {"assistant_id": "steps", "input": {"task": "x"}}, 404, "no thread 'missing'"),
    ("POST", "/runs/wait", {"assistant_id": "approve", "input": {"task": "x", "vars": {"tone": 1}}}, 422, "input.vars"),
    ("POST", "/runs/wait", {"assistant_id": "steps", "input": {"text": "x"}}, 422, "input.task is the task"),
    ("POST", "/runs/wait", {"assistant_id": "steps", "input": {"task": "x"}, "stream_mode": "debug"}, 422,
     "stream mode 'debug' is not supported"),
    ("POST", "/runs/wait", {"assistant_id": "steps", "input": {"task": "x"}, "interrupt_before": ["Read"]}, 422,
     "'interrupt_before' is not supported"),
    ("POST", "/assistants", {"graph_id": "steps"}, 422, "is not supported by statebound serve"),
    ("GET", "/nowhere", None, 404, "is not an endpoint"),
])
def test_bad_requests_are_refused_naming_what_is_wrong_and_store_nothing(server, method, path, body, status, said):
    before = httpx.post(f"{server.url}/threads/count", json={}).json()
    answer = httpx.request(method, f"{server.url}{path}", json=body)
    assert answer.status_code == status and said in answer.json()["detail"], answer.text
    assert httpx.post(f"{server.url}/threads/count", json={}).json() == before


def test_a_resume_with_no_pause_pending_and_an_oversized_body_are_refused(server):
    thread = httpx.post(f"{server.url}/threads", json={}).json()["thread_id"]
    httpx.post(f"{server.url}/threads/{thread}/runs/wait", json={"assistant_id": "steps", "input": {"task": "x"}})
    resumed = httpx.post(f"{server.url}/threads/{thread}/runs/wait",
                         json={"assistant_id": "steps", "command": {"resume": "yes"}})
    assert resumed.status_code == 409 and "waits for no answer (it is final)" in resumed.json()["detail"]
    huge = httpx.post(f"{server.url}/runs/wait", json={"assistant_id": "steps", "input": {"task": "x" * (2 << 20)}})
    assert huge.status_code == 413


def test_foreign_hosts_cross_origin_writes_and_missing_tokens_are_refused(tmp_path):
    with serving(str(tmp_path / "s.db"), "--auth-token", "s3cret") as guarded:
        assert httpx.get(f"{guarded.url}/ok").status_code == 401
        ok = {"Authorization": "Bearer s3cret"}
        assert httpx.get(f"{guarded.url}/ok", headers=ok).status_code == 200
        rebound = httpx.get(f"{guarded.url}/ok", headers={**ok, "Host": "evil.example:8123"})
        assert rebound.status_code == 421
        foreign = httpx.post(f"{guarded.url}/threads", json={}, headers={**ok, "Origin": "http://evil.example"})
        assert foreign.status_code == 403
        assert httpx.post(f"{guarded.url}/threads/count", json={}, headers=ok).json() == 0


def test_the_servers_page_of_a_paused_thread_answers_it(server):
    thread = httpx.post(f"{server.url}/threads", json={}).json()["thread_id"]
    httpx.post(f"{server.url}/threads/{thread}/runs/wait",
               json={"assistant_id": "approve", "input": {"task": "Invite <b>Ann</b>"}})
    page = httpx.get(f"{server.url}/threads/{thread}/page")
    assert page.status_code == 200 and "The flow asks:" in page.text and "Send &#39;Hello Ann&#39; (plain)?" in page.text
    assert "Invite &lt;b&gt;Ann&lt;/b&gt;" in page.text  # what the thread holds is shown as text
    foreign = httpx.post(f"{server.url}/threads/{thread}/page", data={"answer": "yes"},
                         headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403
    empty = httpx.post(f"{server.url}/threads/{thread}/page", data={"answer": ""})
    assert empty.status_code == 400 and "write an answer" in empty.text
    answered = httpx.post(f"{server.url}/threads/{thread}/page", data={"answer": "yes"}, follow_redirects=True)
    assert answered.status_code == 200 and "The flow asks:" not in answered.text
    assert '<span class="badge idle">idle</span>' in answered.text
    state = httpx.get(f"{server.url}/threads/{thread}/state").json()
    assert state["values"]["vars"]["approved"] is True and state["values"]["state"] == "Sent"


def test_with_mcp_the_same_server_offers_its_flows_as_mcp_tools(tmp_path):
    mcp = pytest.importorskip("mcp")

    with serving(str(tmp_path / "s.db"), "--mcp") as both:
        async def call() -> tuple[list[str], object]:
            async with mcp.Client(f"{both.url}/mcp") as client:
                listing = await client.list_tools()
                result = await client.call_tool("steps", {"task": "one two three"})
                return [tool.name for tool in listing.tools], result

        names, result = asyncio.run(call())
        agent_protocol = httpx.post(f"{both.url}/threads/count", json={}).json()
    assert names == ["steps", "approve", "shop", "slow"]
    assert (result.structured_content["status"], result.structured_content["exit_state"]) == ("final", "End")
    assert agent_protocol >= 1  # the MCP call's thread is one of the server's threads
