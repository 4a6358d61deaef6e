"""Live-flow stores in read-only places, on a real read-only file system (a bubblewrap read-only
bind mount): ``statebound threads`` lists them, a killed writer's log included, and changes
nothing; a run that would write there is refused, naming the read-only place."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

STATEBOUND = Path(sys.executable).parent / "statebound"
WRITER = textwrap.dedent('''
    import os, sys
    from statebound import AskHuman, Flow, ScriptedLLM, SQLiteCheckpointer, State, always
    flow = Flow(name="ask", initial="Ask", states=[
        State("Ask", outputs=[AskHuman("ok?")], transitions=[(always(), "End")]), State("End", final=True)])
    store = SQLiteCheckpointer(sys.argv[1])
    flow.run_sync("first", checkpointer=store, thread="t1")
    flow.run_sync("second", checkpointer=store, thread="t2")
    os._exit(0)  # killed: the log is not folded into the file
''')


def _mounts() -> str | None:
    if shutil.which("bwrap") is None:
        return "needs bubblewrap (apt-get install bubblewrap)"
    probe = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--ro-bind", "/tmp", "/tmp", "true"], capture_output=True,
                           text=True, check=False)
    return None if probe.returncode == 0 else f"bubblewrap cannot mount here: {probe.stderr.strip()}"


pytestmark = [pytest.mark.integration, pytest.mark.skipif((why := _mounts()) is not None, reason=str(why))]


def _read_only(place: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bwrap", "--dev-bind", "/", "/", "--ro-bind", str(place), str(place), str(STATEBOUND), *args],
                          capture_output=True, text=True, timeout=120, check=False, env={**os.environ, "COLUMNS": "200"})


def _digest(place: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(place.iterdir())}


def test_a_store_in_a_read_only_place_is_listed_with_a_killed_writers_log_and_left_as_it_was(tmp_path):
    place = tmp_path / "place"
    place.mkdir()
    store = place / "live.db"
    subprocess.run([sys.executable, "-c", WRITER, str(store)], check=True, timeout=60)
    (place / "live.db-shm").unlink()  # as a copied store may come: the log alone
    assert (place / "live.db-wal").stat().st_size > 0
    before = _digest(place)
    listed = _read_only(place, "threads", str(store))
    assert listed.returncode == 0, listed.stderr
    assert "t1" in listed.stdout and "t2" in listed.stdout and listed.stdout.count("paused") == 2
    one = _read_only(place, "threads", str(store), "t2")
    assert one.returncode == 0 and "pause" in one.stdout, one.stderr
    assert _digest(place) == before  # nothing written there


def test_a_run_that_would_write_in_a_read_only_place_names_it(tmp_path):
    place = tmp_path / "place"
    place.mkdir()
    store = place / "live.db"
    subprocess.run([sys.executable, "-c", WRITER, str(store)], check=True, timeout=60)
    ran = _read_only(place, "run", "arithmetic", "-m", "scripted", "--store", str(store), "--thread", "t3")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "is in a read-only place" in ran.stderr and "Traceback" not in ran.stderr
