"""The Starlette application of ``statebound view``: one route per page, each reading its store
again (so a run being written shows new episodes on reload) and rendering a Jinja2 template with
autoescape on, so text from models, environments and tasks is always shown as text. The one
write is a fork of a thread (a form's POST, refused from other sites' pages)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import escape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from statebound.errors import CheckpointError
from statebound.flow.live import fork_thread
from statebound.flow.live.forking import parse_sets
from statebound.view import runs as run_data
from statebound.view.episode import episode_page
from statebound.view.sources import Sources
from statebound.view.threads import read_thread, read_threads
from statebound.web.forms import MAX_INT, FormError, form_int, parse_form
from statebound.web.guard import foreign_origin

__all__ = ["build_app"]


def link(path: str, **params: Any) -> str:
    """``path`` with the given query parameters (those that are ``None`` or empty left out)."""
    kept = {key: value for key, value in params.items() if value not in (None, "")}
    return path + ("?" + urlencode(kept) if kept else "")


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("statebound.view", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.globals.update(link=link, seg=lambda text: quote(str(text), safe=""))
    env.filters["json"] = lambda value: json.dumps(value, ensure_ascii=False, default=str)
    return env


class _Pages:
    """The handlers, over the ``sources`` given on the command line."""

    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self.env = _environment()

    def render(self, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(sources=self.sources, **values)
        return HTMLResponse(html, status_code=status)

    def missing(self, what: str) -> HTMLResponse:
        return self.render("missing.html", status=404, what=what)

    def _run(self, request: Request) -> tuple[str, Path] | None:
        name = request.path_params.get("run") or request.query_params.get("run") or next(iter(self.sources.runs), "")
        path = self.sources.runs.get(name)
        return None if path is None else (name, path)

    def index(self, request: Request) -> HTMLResponse:
        runs = {name: run_data.read_run(path) for name, path in self.sources.runs.items()}
        stores = {name: read_threads(path) for name, path in self.sources.stores.items()}
        return self.render("index.html", runs=runs, stores=stores)

    def run(self, request: Request) -> HTMLResponse:
        if (found := self._run(request)) is None:
            return self.missing(f"no run {request.path_params.get('run')!r} here")
        name, path = found
        query = request.query_params
        agent, want = query.get("agent") or None, query.get("outcome") or None
        sort = query.get("sort") or "run"
        sort = sort if sort in run_data.SORTS else "run"
        facts = run_data.read_run(path)
        grid = run_data.grid(facts.results, agent=agent, want=want if want in run_data.OUTCOMES else None, sort=sort)
        previews = run_data.task_previews(path, run_data.read_config(path))
        return self.render("run.html", name=name, path=path, facts=facts, grid=grid, agent=agent, want=want,
                           sort=sort, sorts=run_data.SORTS, outcomes=run_data.OUTCOMES, previews=previews,
                           sections=run_data.result_sections(path), outcome=run_data.outcome)

    def search(self, request: Request) -> HTMLResponse:
        """The episodes whose text holds ``q``, in the run ``run`` or in every run."""
        text = request.query_params.get("q", "").strip()
        run = request.query_params.get("run") or None
        if run is not None and run not in self.sources.runs:
            return self.missing(f"no run {run!r} here")
        runs = self.sources.runs if run is None else {run: self.sources.runs[run]}
        problem = run_data.search_problem(text)
        hits = [] if problem else run_data.search(runs, text)
        return self.render("search.html", status=400 if problem else 200, text=text, run=run, hits=hits,
                           problem=problem, limit=run_data.SEARCH_LIMIT)

    def _episode(self, path: Path, task: str, agent: str, model: str | None, seed: int | None) -> Any:
        result = run_data.episode(path, task=task, agent=agent, model=model or None, seed=seed)
        return None if result is None else episode_page(result, run_data.read_config(path),
                                                        diagrams=run_data.read_diagrams(path))

    def episode(self, request: Request) -> HTMLResponse:
        if (found := self._run(request)) is None:
            return self.missing(f"no run {request.path_params.get('run')!r} here")
        name, path = found
        query = request.query_params
        task, agent = query.get("task", ""), query.get("agent", "")
        page = self._episode(path, task, agent, query.get("model"), _seed(query))
        if page is None:
            return self.missing(f"run {name} has no episode of task {task!r} by agent {agent!r}")
        others = [a for a in run_data.read_run(path).agents if a != agent]
        return self.render("episode.html", name=name, page=page, others=others)

    def compare(self, request: Request) -> HTMLResponse:
        if (found := self._run(request)) is None:
            return self.missing(f"no run {request.query_params.get('run')!r} here")
        name, path = found
        query = request.query_params
        task = query.get("task", "")
        sides = []
        for key in ("a", "b"):
            agent = query.get(key, "")
            page = self._episode(path, task, agent, query.get("model"), _seed(query))
            if page is None:
                return self.missing(f"run {name} has no episode of task {task!r} by agent {agent!r}")
            sides.append(page)
        return self.render("compare.html", name=name, task=task, sides=sides)

    def store(self, request: Request) -> HTMLResponse:
        name = request.path_params["store"]
        if (path := self.sources.stores.get(name)) is None:
            return self.missing(f"no live-flow store {name!r} here")
        return self.render("store.html", name=name, path=path, threads=read_threads(path))

    def thread(self, request: Request, problem: str | None = None) -> HTMLResponse:
        name, thread = request.path_params["store"], request.path_params["thread"]
        if (path := self.sources.stores.get(name)) is None:
            return self.missing(f"no live-flow store {name!r} here")
        if (view := read_thread(path, thread)) is None:
            return self.missing(f"store {name} has no thread {thread!r}")
        return self.render("thread.html", status=400 if problem else 200, name=name, path=path, view=view,
                           problem=problem)

    async def fork(self, request: Request) -> Response:
        """A new thread from the form's checkpoint (``seq``; ``edit_index`` and ``edit_text`` to
        rewrite a history entry; ``set``: flow variables, a FIELD=JSON per line; ``name``), then
        its page; posts from other sites are refused, and a form that cannot be read is a 400
        saying why."""
        if (why := foreign_origin(request.headers)) is not None:
            return HTMLResponse(f"forks are made from the viewer's own pages ({escape(why)})", status_code=403)
        store, thread = request.path_params["store"], request.path_params["thread"]
        if (path := self.sources.stores.get(store)) is None:
            return self.missing(f"no live-flow store {store!r} here")
        try:
            form = parse_form(await request.body(), fields=_FORK_FIELDS)
            at = form_int(form, "seq", what="the checkpoint's number")
            index = form_int(form, "edit_index", what="the #index of the entry to edit", required=False)
        except FormError as error:
            return self.thread(request, problem=str(error))
        assert at is not None  # required
        edit = (index, form.get("edit_text", "")) if index is not None else None
        try:
            sets = parse_sets([line for line in form.get("set", "").splitlines() if line.strip()])
            new = fork_thread(str(path), thread, at=at, edit=edit, name=form.get("name") or None, sets=sets)
        except CheckpointError as error:
            return self.thread(request, problem=str(error))
        return RedirectResponse(f"/store/{quote(store, safe='')}/thread/{quote(new, safe='')}", status_code=303)


_FORK_FIELDS = ("seq", "edit_index", "edit_text", "set", "name")


def _seed(query: Mapping[str, str]) -> int | None:
    """The ``seed`` a link asks for (none: the first stored); a 400 when it is not a seed."""
    return form_int(query, "seed", low=-MAX_INT - 1, required=False)


async def _bad_request(request: Request, error: Exception) -> HTMLResponse:
    """A value in the URL that cannot be used: 400 with the reason."""
    return HTMLResponse(f"bad request: {escape(str(error))}", status_code=400)


def build_app(sources: Sources) -> Starlette:
    """The viewer's application over ``sources``."""
    pages = _Pages(sources)
    static = Path(__file__).parent / "static"
    return Starlette(exception_handlers={FormError: _bad_request}, routes=[
        Route("/", pages.index),
        Route("/run/{run}", pages.run),
        Route("/run/{run}/episode", pages.episode),
        Route("/compare", pages.compare),
        Route("/search", pages.search),
        Route("/store/{store}", pages.store),
        Route("/store/{store}/fork/{thread:path}", pages.fork, methods=["POST"]),
        Route("/store/{store}/thread/{thread:path}", pages.thread),
        Mount("/static", StaticFiles(directory=static), name="static"),
    ])
