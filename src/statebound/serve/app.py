"""``statebound serve``'s HTTP application: the part of the Agent Protocol that LangGraph's
``langgraph-sdk`` client and the UIs built on it use, over statebound's checkpointed threads.

Assistants are the served flows (the id is the flow's name). Threads are checkpointed threads;
runs are :mod:`statebound.serve.runner`'s; a paused flow's question is the run's interrupt, and
``Command(resume=...)`` answers it. Which endpoints and fields are covered: docs/serve.md.
Anything else answers with a 4xx naming it; a refused request stores nothing.
"""

from __future__ import annotations

import contextlib
import functools
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any
from urllib.parse import quote

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from statebound.errors import CheckpointError, DefinitionError
from statebound.flow import Flow
from statebound.serve.db import ACTIVE, RunRow
from statebound.serve.problems import Problem, missing
from statebound.serve.runner import Executor
from statebound.serve.shapes import assistant_shape, run_shape, thread_shape
from statebound.serve.streams import MODES
from statebound.serve.threads import history, now_of, status_of
from statebound.web.forms import FormError, parse_form
from statebound.web.guard import HostGuard, TokenGuard, allowed_hosts

__all__ = ["build_app"]

_MULTITASK = ("reject", "enqueue", "interrupt")
_UNSUPPORTED_RUN_FIELDS = ("interrupt_before", "interrupt_after", "webhook", "checkpoint", "checkpoint_id",
                           "after_seconds", "feedback_keys", "stream_subgraphs")


def _json(data: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(orjson.dumps(data), status_code=status, media_type="application/json", headers=headers)


class Api:
    """The endpoints, over one :class:`Executor` (flows, store, runs)."""

    def __init__(self, executor: Executor, *, max_streams: int) -> None:
        self.runs = executor
        self.started = time.time()
        self.max_streams = max_streams
        self.streams = 0  # open event streams

    @property
    def flows(self) -> dict[str, Flow[Any]]:
        return self.runs.flows

    # ---- helpers ------------------------------------------------------------------------------
    async def body(self, request: Request) -> dict[str, Any]:
        raw = await request.body()  # bounded by the guard in front
        if not raw:
            return {}
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            raise Problem(422, f"the body is not JSON: {error}") from None
        if not isinstance(data, dict):
            raise Problem(422, f"the body is a JSON object, not {type(data).__name__}")
        return data

    def flow(self, name: Any) -> tuple[str, Flow[Any]]:
        if not isinstance(name, str) or name not in self.flows:
            raise missing("assistant", str(name), self.flows)
        return name, self.flows[name]

    def thread_known(self, thread: str) -> bool:
        return bool(self.runs.db.thread_rows(thread)) or self.runs.store.record(thread) is not None

    def thread_or_404(self, thread: str) -> None:
        if not self.thread_known(thread):
            raise missing("thread", thread, self._thread_names())

    def _thread_names(self) -> list[str]:
        return [*self.runs.db.thread_rows(), *(info.thread for info in self.runs.store.threads())]

    def thread_json(self, thread: str) -> dict[str, Any]:
        rows = self.runs.db.thread_rows(thread)
        now = now_of(self.runs.store, thread)
        record = self.runs.store.record(thread)
        metadata, created, updated = rows.get(thread, ({}, record.created if record else 0.0, 0.0))
        updated = max(updated, created, now.updated if now is not None else 0.0)
        return thread_shape(thread, metadata, created, updated, status_of(self.runs.db, thread, now),
                            now.values() if now is not None else None)

    def run_of(self, thread: str, run_id: str) -> RunRow:
        run = self.runs.db.run(run_id)
        if run is None or run.thread != thread:
            raise missing("run", run_id, [r.run_id for r in self.runs.db.runs_of(thread, limit=20)])
        return run

    # ---- assistants ---------------------------------------------------------------------------
    async def assistants_search(self, request: Request) -> Response:
        body = await self.body(request)
        graph = body.get("graph_id")
        names = [name for name in self.flows if graph in (None, name)]
        limit, offset = int(body.get("limit", 10)), int(body.get("offset", 0))
        return _json([assistant_shape(n, _describe(self.flows[n]), self.started) for n in names][offset:offset + limit])

    async def assistants_count(self, request: Request) -> Response:
        body = await self.body(request)
        return _json(sum(body.get("graph_id") in (None, name) for name in self.flows))

    async def assistant(self, request: Request) -> Response:
        name, flow = self.flow(request.path_params["assistant"])
        return _json(assistant_shape(name, _describe(flow), self.started))

    async def assistant_schemas(self, request: Request) -> Response:
        name, flow = self.flow(request.path_params["assistant"])
        return _json({"graph_id": name, "input_schema": _input_schema(flow), "output_schema": None,
                      "state_schema": flow.vars.schema() if flow.vars is not None else None,
                      "config_schema": None, "context_schema": None})

    async def assistant_graph(self, request: Request) -> Response:
        _, flow = self.flow(request.path_params["assistant"])
        nodes = [{"id": state.name, "type": "runnable", "data": {"final": state.final}} for state in flow.states]
        edges = [{"source": state.name, "target": target, "conditional": len(flow.edges[state.name]) > 1}
                 for state in flow.states for edge in flow.edges[state.name] for target in edge.targets]
        return _json({"nodes": nodes, "edges": edges})

    async def unsupported(self, request: Request) -> Response:
        raise Problem(422, f"{request.method} {request.url.path} is not supported by statebound serve "
                           "(the table in docs/serve.md lists what is)")

    # ---- threads ------------------------------------------------------------------------------
    async def threads_create(self, request: Request) -> Response:
        body = await self.body(request)
        thread = str(body.get("thread_id") or uuid.uuid4())
        if not self.runs.db.add_thread(thread, _metadata(body), time.time()):
            if body.get("if_exists") != "do_nothing":
                raise Problem(409, f"thread {thread!r} exists already (if_exists='do_nothing' returns it)")
        elif self.runs.store.record(thread) is not None and body.get("if_exists") != "do_nothing":
            raise Problem(409, f"thread {thread!r} exists already in the store")
        return _json(self.thread_json(thread))

    async def thread_get(self, request: Request) -> Response:
        thread = request.path_params["thread"]
        self.thread_or_404(thread)
        return _json(self.thread_json(thread))

    async def thread_patch(self, request: Request) -> Response:
        thread = request.path_params["thread"]
        self.thread_or_404(thread)
        body = await self.body(request)
        rows = self.runs.db.thread_rows(thread)
        now = time.time()
        if thread not in rows:
            self.runs.db.add_thread(thread, {}, now)
            rows = self.runs.db.thread_rows(thread)
        self.runs.db.update_thread(thread, {**rows[thread][0], **_metadata(body)}, now)
        return _json(self.thread_json(thread))

    async def thread_delete(self, request: Request) -> Response:
        thread = request.path_params["thread"]
        self.thread_or_404(thread)
        if self.runs.db.active_runs(thread):
            raise Problem(409, f"thread {thread!r} has a run going: cancel it first")
        if self.runs.store.record(thread) is not None:
            try:
                self.runs.store.delete(thread)
            except CheckpointError as error:
                raise Problem(409, str(error)) from None
        self.runs.db.delete_thread(thread)
        return Response(status_code=204)

    async def threads_search(self, request: Request) -> Response:
        body = await self.body(request)
        wanted_meta, wanted_status = body.get("metadata") or {}, body.get("status")
        names = list(dict.fromkeys(self._thread_names()))
        found = []
        for thread in names:
            shaped = self.thread_json(thread)
            if all(shaped["metadata"].get(k) == v for k, v in wanted_meta.items()) and \
                    wanted_status in (None, shaped["status"]):
                found.append(shaped)
        found.sort(key=lambda t: t["created_at"], reverse=body.get("sort_order", "desc") == "desc")
        limit, offset = int(body.get("limit", 10)), int(body.get("offset", 0))
        return _json(found[offset:offset + limit])

    async def threads_count(self, request: Request) -> Response:
        return _json(len(set(self._thread_names())))

    async def thread_copy(self, request: Request) -> Response:
        thread = request.path_params["thread"]
        self.thread_or_404(thread)
        new = str(uuid.uuid4())
        now = now_of(self.runs.store, thread)
        metadata = self.runs.db.thread_rows(thread).get(thread, ({}, 0, 0))[0]
        if now is not None:
            self.runs.store.fork(thread, at=now.last_seq, thread=new)
        self.runs.db.add_thread(new, dict(metadata), time.time())
        return _json(self.thread_json(new))

    async def thread_state(self, request: Request) -> Response:
        thread = request.path_params["thread"]
        self.thread_or_404(thread)
        seq = request.path_params.get("checkpoint")
        if request.method == "POST":  # /state/checkpoint with {"checkpoint": {"checkpoint_id": ...}}
            seq = ((await self.body(request)).get("checkpoint") or {}).get("checkpoint_id")
        states = history(self.runs.store, thread, limit=10**9, before=None)
        if not states:
            return _json({"values": {}, "next": [], "checkpoint": None, "metadata": {}, "created_at": None,
                          "parent_checkpoint": None, "tasks": [], "interrupts": []})
        if seq is None:
            return _json(states[0])
        for state in states:
            if state["checkpoint"]["checkpoint_id"] == str(seq):
                return _json(state)
        raise missing("checkpoint", str(seq), [s["checkpoint"]["checkpoint_id"] for s in states])

    async def thread_update_state(self, request: Request) -> Response:
        thread = request.path_params["thread"]
        self.thread_or_404(thread)
        body = await self.body(request)
        now = now_of(self.runs.store, thread)
        if now is None:
            raise Problem(409, f"thread {thread!r} has not run yet: give its variables with the first run's input")
        asked = body.get("checkpoint_id") or (body.get("checkpoint") or {}).get("checkpoint_id")
        if asked is not None and str(asked) != str(now.last_seq):
            raise Problem(409, f"only the newest checkpoint ({now.last_seq}) can be changed in place: copy the "
                               "thread (threads.copy) or fork it at the older one")
        if body.get("as_node") not in (None, now.folded.stored.state):
            raise Problem(422, f"as_node names the state the update is written by; thread {thread!r} stands in "
                               f"{now.folded.stored.state!r}, and statebound writes updates there only")
        sets = _vars_of(body.get("values"))
        if self.runs.db.active_runs(thread):
            raise Problem(409, f"thread {thread!r} has a run going: its state changes between runs only")
        try:
            seq = self.runs.store.update(thread, vars=sets)
        except CheckpointError as error:
            raise Problem(422, str(error)) from None
        return _json({"checkpoint": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": str(seq),
                                     "checkpoint_map": None}})

    async def thread_history(self, request: Request) -> Response:
        thread = request.path_params["thread"]
        self.thread_or_404(thread)
        body = await self.body(request) if request.method == "POST" else dict(request.query_params)
        before = body.get("before")
        if isinstance(before, dict):
            before = before.get("checkpoint_id")
        return _json(history(self.runs.store, thread, limit=int(body.get("limit", 10)),
                             before=int(before) if before is not None else None))

    # ---- runs ---------------------------------------------------------------------------------
    def _accept(self, thread: str | None, body: dict[str, Any], *, stateless: bool = False) -> RunRow:
        for name in _UNSUPPORTED_RUN_FIELDS:
            if body.get(name) not in (None, False, [], {}):
                raise Problem(422, f"the run field {name!r} is not supported by statebound serve (docs/serve.md)")
        assistant, flow = self.flow(body.get("assistant_id"))
        multitask = body.get("multitask_strategy") or "reject"
        if multitask not in _MULTITASK:
            raise Problem(422, f"multitask_strategy {multitask!r} is not supported: use one of {', '.join(_MULTITASK)}")
        modes = body.get("stream_mode") or ["values"]
        modes = [modes] if isinstance(modes, str) else list(modes)
        if unknown := [m for m in modes if m not in MODES]:
            raise Problem(422, f"stream mode {unknown[0]!r} is not supported: use {', '.join(MODES)}")
        if thread is None:
            thread = str(uuid.uuid4())
        elif not self.thread_known(thread):
            if body.get("if_not_exists") != "create":
                raise missing("thread", thread, self._thread_names())
        active = self.runs.db.active_runs(thread)
        if active and multitask == "reject":
            raise Problem(409, f"thread {thread!r} is busy with run {active[0].run_id} ({active[0].status}); wait "
                               "for it (runs.join), or ask with multitask_strategy 'enqueue' or 'interrupt'")
        request = {"stream_mode": modes, **_run_request(flow, body, now_of(self.runs.store, thread), active)}
        completion = body.get("on_completion") or ("delete" if stateless else "keep")
        if completion not in ("keep", "delete"):
            raise Problem(422, f"on_completion is 'keep' or 'delete', not {completion!r}")
        request["on_completion"] = completion
        if stateless or not self.runs.db.thread_rows(thread):
            self.runs.db.add_thread(thread, {}, time.time())
        return self.runs.accept(thread, assistant, request, metadata=_metadata(body), multitask=multitask)

    async def runs_create(self, request: Request) -> Response:
        thread = request.path_params.get("thread")
        run = self._accept(thread, await self.body(request), stateless=thread is None)
        return _json(run_shape(run), headers=_locations(run))

    async def runs_wait(self, request: Request) -> Response:
        thread = request.path_params.get("thread")
        run = self._accept(thread, await self.body(request), stateless=thread is None)
        _, answer = await self.runs.wait(run.run_id)
        return _json(answer, headers=_locations(run))

    async def runs_stream(self, request: Request) -> Response:
        self._stream_room()  # before the run is stored: a refused request stores nothing
        body = await self.body(request)
        thread = request.path_params.get("thread")
        run = self._accept(thread, body, stateless=thread is None)
        return self._sse(run, after=0, on_disconnect=body.get("on_disconnect"))

    def _stream_room(self) -> None:
        if self.streams >= self.max_streams:
            raise Problem(503, f"{self.streams} event streams are open, this server's limit: wait for the run "
                               "(runs.wait, runs.join) or stream it when one closes")

    def _sse(self, run: RunRow, *, after: int, on_disconnect: str | None = None) -> StreamingResponse:
        executor = self.runs
        self._stream_room()
        self.streams += 1

        async def events() -> AsyncIterator[bytes]:
            finished = False
            try:
                async for seq, event, data in executor.events(run.run_id, after=after):
                    yield b"event: %s\ndata: %s\nid: %d\n\n" % (event.encode(), orjson.dumps(data), seq)
                finished = True
            finally:
                self.streams -= 1
                if not finished and on_disconnect == "cancel":
                    current = executor.db.run(run.run_id)
                    if current is not None and current.status in ACTIVE:
                        executor.cancel(current, "interrupt")

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={**_locations(run, stream=True), "Cache-Control": "no-store"})

    async def runs_list(self, request: Request) -> Response:
        thread = request.path_params["thread"]
        self.thread_or_404(thread)
        query = request.query_params
        runs = self.runs.db.runs_of(thread, limit=int(query.get("limit", 10)), offset=int(query.get("offset", 0)),
                                    status=query.get("status"))
        return _json([run_shape(run) for run in runs])

    async def run_get(self, request: Request) -> Response:
        return _json(run_shape(self.run_of(request.path_params["thread"], request.path_params["run"])))

    async def run_join(self, request: Request) -> Response:
        run = self.run_of(request.path_params["thread"], request.path_params["run"])
        _, answer = await self.runs.wait(run.run_id)
        return _json(answer)

    async def run_join_stream(self, request: Request) -> Response:
        run = self.run_of(request.path_params["thread"], request.path_params["run"])
        last = request.headers.get("last-event-id", "0")
        if not last.isdigit():
            raise Problem(422, f"Last-Event-ID is an event number, not {last!r}")
        return self._sse(run, after=int(last))

    async def run_cancel(self, request: Request) -> Response:
        run = self.run_of(request.path_params["thread"], request.path_params["run"])
        action = request.query_params.get("action", "interrupt")
        if action != "interrupt":
            raise Problem(422, f"cancel action {action!r} is not supported: 'interrupt' stops the run and keeps what "
                               "it stored (statebound never rolls checkpoints back; fork the thread instead)")
        if run.status in ACTIVE:
            self.runs.cancel(run, action)
            if request.query_params.get("wait") in ("1", "true", "True"):
                await self.runs.wait(run.run_id)
        return Response(status_code=202)

    async def run_delete(self, request: Request) -> Response:
        run = self.run_of(request.path_params["thread"], request.path_params["run"])
        if run.status in ACTIVE:
            raise Problem(409, f"run {run.run_id!r} is {run.status}: cancel it first")
        self.runs.db.execute("DELETE FROM statebound_run_events WHERE run_id = ?", (run.run_id,))
        self.runs.db.execute("DELETE FROM statebound_runs WHERE run_id = ?", (run.run_id,))
        return Response(status_code=204)

    # ---- the server's own pages ------------------------------------------------------------
    def page(self, thread: str, *, problem: str | None = None) -> Response:
        self.thread_or_404(thread)
        now = now_of(self.runs.store, thread)
        record = self.runs.store.record(thread)
        html = _pages().get_template("thread.html").render(
            thread=thread, flow=record.flow if record is not None else "", values=now.values() if now else None,
            status=status_of(self.runs.db, thread, now), pending=now.pending if now is not None else None,
            answer_url=f"/threads/{quote(thread, safe='')}/page", problem=problem)
        return Response(html, status_code=400 if problem else 200, media_type="text/html")

    async def thread_page(self, request: Request) -> Response:
        """A thread as a person reads it: its history and variables, and a form that answers its
        question when it waits for one (the answer runs it on)."""
        return self.page(request.path_params["thread"])

    async def thread_page_answer(self, request: Request) -> Response:
        thread = request.path_params["thread"]
        try:
            answer = parse_form(await request.body(), fields=("answer",)).get("answer", "")
        except FormError as error:
            return self.page(thread, problem=str(error))
        record = self.runs.store.record(thread)
        if record is None or not answer:
            return self.page(thread, problem="write an answer" if record else "the thread has not run yet")
        try:
            run = self._accept(thread, {"assistant_id": record.flow, "command": {"resume": answer}})
        except Problem as problem:
            return self.page(thread, problem=str(problem))
        await self.runs.wait(run.run_id)
        return RedirectResponse(f"/threads/{quote(thread, safe='')}/page", status_code=303)

    async def ok(self, request: Request) -> Response:
        return _json({"ok": True})

    async def info(self, request: Request) -> Response:
        import statebound

        return _json({"version": statebound.__version__, "server": "statebound serve", "worker": self.runs.worker,
                      "flags": {"assistants": False, "crons": False}})


@functools.cache
def _pages() -> Any:
    from jinja2 import Environment, PackageLoader, select_autoescape

    return Environment(loader=PackageLoader("statebound.serve", "templates"), autoescape=select_autoescape())


def _describe(flow: Flow[Any]) -> str:
    return f"statebound flow {flow.name!r}: states {', '.join(s.name for s in flow.states)}"


def _input_schema(flow: Flow[Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "task": {"type": "string", "description": "the task the flow solves"},
        "messages": {"type": "array", "description": "or chat messages: the last user message is the task"},
    }
    if flow.vars is not None:
        properties["vars"] = {**flow.vars.schema(), "description": "the flow variables to start from"}
    return {"type": "object", "title": flow.name, "properties": properties}


def _metadata(body: Mapping[str, Any]) -> dict[str, Any]:
    metadata = body.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise Problem(422, "metadata is a JSON object")
    return metadata


def _vars_of(values: Any) -> dict[str, Any]:
    """The variables a state update sets: ``{"vars": {...}}`` or the fields themselves."""
    if not isinstance(values, dict):
        raise Problem(422, "values is a JSON object of flow variables to set ({'vars': {...}} or the fields)")
    return dict(values["vars"]) if isinstance(values.get("vars"), dict) else values


def _task_of(flow: Flow[Any], given: Any) -> tuple[str, dict[str, Any] | None]:
    """A new run's task and starting variables from its ``input``."""
    if not isinstance(given, dict):
        raise Problem(422, "input is a JSON object: {'task': '...'} or {'messages': [...]} (and 'vars')")
    task = given.get("task")
    if task is None and isinstance(given.get("messages"), list):
        said = [m.get("content") for m in given["messages"] if isinstance(m, dict) and
                m.get("role", m.get("type")) in ("user", "human")]
        task = said[-1] if said else None
    if not isinstance(task, str) or not task:
        raise Problem(422, "input.task is the task, a non-empty string (or input.messages ending with a user message)")
    starting = given.get("vars")
    if starting is not None:
        if flow.vars is None:
            raise Problem(422, f"flow {flow.name!r} declares no variables: input.vars is not taken")
        if not isinstance(starting, dict):
            raise Problem(422, "input.vars is a JSON object of the flow variables' fields")
        try:
            flow.vars.load(starting)
        except DefinitionError as error:
            raise Problem(422, f"input.vars: {error}") from None
    return task, starting


def _run_request(flow: Flow[Any], body: dict[str, Any], now: Any, active: list[RunRow]) -> dict[str, Any]:
    """What a run is asked to do, checked against where its thread stands: a first run's task, an
    answer to the pause, variables to set, or nothing (go on from the last checkpoint)."""
    command = body.get("command") or {}
    if not isinstance(command, dict):
        raise Problem(422, "command is a JSON object: {'resume': ...} and/or {'update': {...}}")
    if command.get("goto") is not None:
        raise Problem(422, "Command(goto=...) is not supported: a statebound flow moves by its own transitions")
    given = body.get("input")
    if now is None and not active:  # nothing stored yet: this run starts the thread
        if command:
            raise Problem(409, "the thread has not started: give input={'task': ...}, not a command")
        task, starting = _task_of(flow, given)
        return {"task": task, "vars": starting}
    if given not in (None, {}):
        raise Problem(409, "this thread has started: input starts a thread only; answer its question with "
                           "command={'resume': ...}, or copy it to run it again")
    request: dict[str, Any] = {}
    if "resume" in command:
        answer = command["resume"]
        if now is not None and not active and now.pending is None:
            raise Problem(409, f"the thread waits for no answer (it is {now.folded.status}); resume it without one")
        request["resume"] = answer if isinstance(answer, str) else orjson.dumps(answer).decode()
    if command.get("update") is not None:
        request["update"] = _vars_of(command["update"])
    return request


def _locations(run: RunRow, *, stream: bool = False) -> dict[str, str]:
    where = f"/threads/{run.thread}/runs/{run.run_id}"
    return {"Content-Location": where, "Location": f"{where}/stream" if stream else f"{where}/join"}


def _handled(endpoint: Callable[[Request], Any]) -> Callable[[Request], Any]:
    async def handle(request: Request) -> Response:
        try:
            return await endpoint(request)
        except Problem as problem:
            return _json({"detail": str(problem)}, status=problem.status)
        except (ValueError, TypeError) as error:
            return _json({"detail": f"a field has the wrong type or value: {error}"}, status=422)
    return handle


def build_app(executor: Executor, *, bound: str = "127.0.0.1", hosts: tuple[str, ...] = (), token: str | None = None,
              max_body: int = 1 << 20, max_streams: int = 256, mcp: bool = False) -> HostGuard:
    """The server's ASGI application (start and stop ``executor`` with it): it answers to the
    local names, ``bound`` (its address) and ``hosts``; with a ``token``, only to requests that
    carry it; bodies up to ``max_body`` bytes; at most ``max_streams`` event streams open at once;
    with ``mcp``, the flows as MCP tools at ``/mcp`` too (streamable HTTP, docs/mcp.md)."""
    api = Api(executor, max_streams=max_streams)
    mcp_app = None
    if mcp:
        from statebound.mcp.flow_server import http_app

        mcp_app = http_app(list(executor.flows.values()), executor.store, llm=executor.llm, path="/mcp")
    routes = [
        ("/ok", api.ok, ["GET"]), ("/info", api.info, ["GET"]),
        ("/assistants/search", api.assistants_search, ["POST"]), ("/assistants/count", api.assistants_count, ["POST"]),
        ("/assistants", api.unsupported, ["POST"]),
        ("/assistants/{assistant}", api.assistant, ["GET"]),
        ("/assistants/{assistant}", api.unsupported, ["PATCH", "DELETE"]),
        ("/assistants/{assistant}/schemas", api.assistant_schemas, ["GET"]),
        ("/assistants/{assistant}/graph", api.assistant_graph, ["GET"]),
        ("/threads", api.threads_create, ["POST"]), ("/threads/search", api.threads_search, ["POST"]),
        ("/threads/count", api.threads_count, ["POST"]), ("/threads/prune", api.unsupported, ["POST"]),
        ("/threads/{thread}", api.thread_get, ["GET"]), ("/threads/{thread}", api.thread_patch, ["PATCH"]),
        ("/threads/{thread}", api.thread_delete, ["DELETE"]), ("/threads/{thread}/copy", api.thread_copy, ["POST"]),
        ("/threads/{thread}/state", api.thread_state, ["GET"]),
        ("/threads/{thread}/state", api.thread_update_state, ["POST"]),
        ("/threads/{thread}/state/checkpoint", api.thread_state, ["POST"]),
        ("/threads/{thread}/state/{checkpoint}", api.thread_state, ["GET"]),
        ("/threads/{thread}/history", api.thread_history, ["GET", "POST"]),
        ("/threads/{thread}/stream", api.unsupported, ["GET"]),
        ("/threads/{thread}/page", api.thread_page, ["GET"]),
        ("/threads/{thread}/page", api.thread_page_answer, ["POST"]),
        ("/threads/{thread}/runs", api.runs_create, ["POST"]), ("/threads/{thread}/runs", api.runs_list, ["GET"]),
        ("/threads/{thread}/runs/stream", api.runs_stream, ["POST"]),
        ("/threads/{thread}/runs/wait", api.runs_wait, ["POST"]),
        ("/threads/{thread}/runs/{run}", api.run_get, ["GET"]),
        ("/threads/{thread}/runs/{run}", api.run_delete, ["DELETE"]),
        ("/threads/{thread}/runs/{run}/join", api.run_join, ["GET"]),
        ("/threads/{thread}/runs/{run}/stream", api.run_join_stream, ["GET"]),
        ("/threads/{thread}/runs/{run}/cancel", api.run_cancel, ["POST"]),
        ("/runs", api.runs_create, ["POST"]), ("/runs/stream", api.runs_stream, ["POST"]),
        ("/runs/wait", api.runs_wait, ["POST"]), ("/runs/batch", api.unsupported, ["POST"]),
        ("/runs/cancel", api.unsupported, ["POST"]), ("/runs/crons", api.unsupported, ["POST"]),
        ("/store/items", api.unsupported, ["GET", "PUT", "DELETE"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await executor.start()
        try:
            if mcp_app is None:
                yield
            else:
                async with mcp_app.router.lifespan_context(mcp_app):  # the MCP SDK's session manager
                    yield
        finally:
            await executor.close()

    served = [Route(path, _handled(handler), methods=methods) for path, handler, methods in routes]
    if mcp_app is not None:
        served.append(Route("/mcp", mcp_app, methods=["GET", "POST", "DELETE"]))
    app = Starlette(routes=served, lifespan=lifespan)

    async def not_found(request: Request, exc: Exception) -> Response:
        return _json({"detail": f"{request.method} {request.url.path} is not an endpoint of statebound serve "
                                "(docs/serve.md lists them)"}, status=404)

    app.add_exception_handler(404, not_found)
    app.add_exception_handler(405, not_found)
    guarded = TokenGuard(app, token=token) if token is not None else app
    return HostGuard(guarded, hosts=allowed_hosts(bound, hosts), max_body=max_body)
