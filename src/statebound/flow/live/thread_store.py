"""What forking a child's thread needs of a checkpoint store (a
:class:`~statebound.flow.live.store.Checkpointer` has it all): named here so the modules that
place and fork children need not import the store, which imports them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from statebound.flow.live.records import StoredCheckpoint, ThreadInfo, ThreadRecord

__all__ = ["ThreadStore"]


class ThreadStore(Protocol):
    """The reading, forking and writing a nested fork does."""

    where: str

    def record(self, thread: str) -> ThreadRecord | None: ...

    def lineage(self, thread: str, *, upto: int | None = None) -> list[StoredCheckpoint]: ...

    def threads(self) -> list[ThreadInfo]: ...

    def fork_rows(self, source: str, *, at: int, thread: str, edit: tuple[int, str] | None = None,
                  vars: Mapping[str, Any] | None = None) -> tuple[ThreadRecord, StoredCheckpoint]: ...  # noqa: A002

    def create_thread(self, record: ThreadRecord) -> None: ...

    def append(self, *checkpoints: StoredCheckpoint) -> None: ...

    def remove(self, thread: str) -> None: ...
