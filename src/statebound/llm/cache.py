"""A persistent response cache: identical deterministic requests are answered from disk.

``CachedLLM(llm, "cache.sqlite")`` (or ``open_model("smollm2", cache="cache.sqlite")``) stores
every completion under a hash of the model's identity and the whole request. A request is cached
only when its result is determined by it: greedy decoding (temperature 0) or a fixed seed. A replay
returns the stored completion with its original usage, so token counts and costs are the same as
for a fresh call; ``hits`` and ``misses`` count what was replayed.

This is what makes a hybrid such as ``cot->react`` cheap to run after ``cot`` and ``react``: its
samples and its fallback are the very requests those agents made. The store is one SQLite file in
WAL mode, shared safely by several processes (Ray workers).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import zlib
from dataclasses import asdict
from pathlib import Path
from typing import Any

import msgspec
from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random

from statebound.llm.base import LLM, Choice, Completion, LLMWrapper, Request, TokenLogprob, Usage

__all__ = ["CachedLLM", "identity_of", "is_deterministic", "request_key"]

_SCHEMA = "CREATE TABLE IF NOT EXISTS completions (key TEXT PRIMARY KEY, value BLOB NOT NULL)"


def _is_locked(error: BaseException) -> bool:
    return isinstance(error, sqlite3.OperationalError) and "locked" in str(error)


def _open_store(path: Path) -> sqlite3.Connection:
    """Open (creating if need be) the store in WAL mode. Switching a new file to WAL takes a lock
    that SQLite does not wait for: two workers opening the same new store at once get "database is
    locked" at once, whatever the busy timeout, so the switch is tried again for a while."""
    db = sqlite3.connect(path, timeout=60, check_same_thread=False, isolation_level=None)
    try:
        for attempt in Retrying(retry=retry_if_exception(_is_locked), stop=stop_after_delay(60),
                                wait=wait_random(0.01, 0.2), reraise=True):
            with attempt:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(_SCHEMA)
    except BaseException:
        db.close()
        raise
    return db


def is_deterministic(request: Request) -> bool:
    """Greedy decoding or a fixed seed: the same request gives the same completion."""
    return request.temperature == 0 or request.seed is not None


def identity_of(llm: LLM) -> str:
    """What distinguishes one model from another in the cache: the backend's ``cache_identity``
    when it has one (the GGUF file and chat mode for llama.cpp), else its type and model name."""
    return getattr(llm, "cache_identity", None) or f"{type(llm).__name__}|{llm.model}"


def request_key(identity: str, request: Request) -> str:
    """A stable hash of the model's identity and every field of ``request`` (as plain JSON: the
    same key for the same request across versions, tested against stored keys)."""
    fields = msgspec.to_builtins(request)
    canonical = json.dumps([identity, fields], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _encode(completion: Completion) -> bytes:
    return zlib.compress(json.dumps(asdict(completion), ensure_ascii=False).encode("utf-8"))


def _decode(blob: bytes) -> Completion:
    data: dict[str, Any] = json.loads(zlib.decompress(blob))
    choices = tuple(
        Choice(
            text=c["text"],
            finish_reason=c["finish_reason"],
            logprobs=None if c["logprobs"] is None else tuple(
                TokenLogprob(t["token"], t["logprob"], tuple((a, b) for a, b in t.get("top", ())))
                for t in c["logprobs"]),
        )
        for c in data["choices"]
    )
    return Completion(choices=choices, usage=Usage(**data["usage"]), model=data["model"])


class CachedLLM(LLMWrapper):
    """Wraps any :class:`~statebound.llm.base.LLM`; deterministic requests are answered from ``path``."""

    def __init__(self, llm: LLM, path: str | Path) -> None:
        self.inner = llm
        self.path = Path(path)
        self.hits = 0
        self.misses = 0
        self._identity = identity_of(llm)
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CachedLLM({self.inner!r}, {str(self.path)!r})"

    def wrapped(self) -> LLM:
        return self.inner

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = _open_store(self.path)
        return self._db

    def _get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._connection().execute("SELECT value FROM completions WHERE key = ?", (key,)).fetchone()
        return None if row is None else _decode(row[0])

    def _put(self, key: str, completion: Completion) -> None:
        with self._lock:
            self._connection().execute(
                "INSERT OR REPLACE INTO completions (key, value) VALUES (?, ?)", (key, _encode(completion))
            )

    async def complete(self, request: Request) -> Completion:
        if not is_deterministic(request):
            return await self.inner.complete(request)
        key = request_key(self._identity, request)
        if (stored := self._get(key)) is not None:
            self.hits += 1
            return stored
        completion = await self.inner.complete(request)
        self.misses += 1
        self._put(key, completion)
        return completion

    async def aclose(self) -> None:
        """Close the store and the wrapped model's connections."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
        closer = getattr(self.inner, "aclose", None)
        if closer is not None:
            await closer()
