"""The real server: it prints its URL and serves the pages over HTTP on localhost; bound to another
address it says on stderr that the viewer is exposed."""

from __future__ import annotations

import urllib.request
from pathlib import Path

from view_server import serving


def test_the_server_prints_its_url_and_serves_the_run(sql_run: Path) -> None:
    with serving(sql_run) as (url, _):
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "run/run-sql") as response:
            assert response.status == 200 and "Tasks × agents" in response.read().decode()


def test_another_host_than_localhost_is_said_to_be_exposed(sql_run: Path) -> None:
    with serving(sql_run, "--host", "0.0.0.0") as (url, process):
        warning = process.stderr.readline() if process.stderr else ""
        assert url.startswith("http://0.0.0.0:")
        assert warning.startswith("warning: serving on 0.0.0.0, not localhost") and "no login" in warning
