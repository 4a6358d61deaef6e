"""Write a run's events to a JSONL trace file (one JSON object per line) and read it back.

::

    with JsonlTrace("run.jsonl") as trace:
        result = await flow.run(task, llm=llm, on_event=trace)
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from statebound.flow.listeners import Event

__all__ = ["JsonlTrace", "read_trace"]


class JsonlTrace:
    """An event callback that appends each event as one JSON line (with a ``time`` stamp).

    Use it as a context manager (or call :meth:`close`); pass ``append=True`` to keep existing
    lines. The file is flushed after every ``run_finished`` event.
    """

    def __init__(self, path: str | Path, *, append: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = self.path.open("a" if append else "w", encoding="utf-8")

    def __call__(self, event: Event) -> None:
        record = event.to_dict()
        record["time"] = round(time.time(), 6)
        self._file.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        if event.kind == "run_finished":
            self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> JsonlTrace:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """The records of a JSONL trace file, in order."""
    with Path(path).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
