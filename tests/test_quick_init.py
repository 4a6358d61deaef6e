"""quick_init gives a frozen, slotted dataclass a faster __init__ that behaves as the one dataclasses
writes: the same parameters, defaults, keyword-only fields, default factories and post-init checks,
and the instance stays frozen."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass, field

import pytest

from statebound.llm.base import Usage
from statebound.quick_init import quick_init


def _record(*, quick: bool) -> type:
    @dataclass(frozen=True, slots=True)
    class Record:
        name: str
        count: int = 1
        tags: list[str] = field(default_factory=list)
        note: str = field(default="", kw_only=True)

        def __post_init__(self) -> None:
            if self.count < 0:
                raise ValueError("count must be 0 or more")

    return quick_init(Record) if quick else Record


Plain, Quick = _record(quick=False), _record(quick=True)


def _parameters(cls: type) -> list[tuple[str, object, bool]]:
    """Each parameter's name, kind and whether it has a default."""
    return [(p.name, p.kind, p.default is not inspect.Parameter.empty)
            for p in inspect.signature(cls.__init__).parameters.values()]


def test_the_same_parameters_and_defaults_as_dataclasses_writes() -> None:
    assert Quick.__init__ is not Plain.__init__ and _parameters(Quick) == _parameters(Plain)
    made = Quick("a", 2, note="n")
    assert (made.name, made.count, made.tags, made.note) == ("a", 2, [], "n")
    assert dataclasses.astuple(made) == dataclasses.astuple(Plain("a", 2, note="n"))
    assert Quick("b").tags is not Quick("b").tags  # a fresh list from the factory each time
    with pytest.raises(TypeError):
        Quick("a", 2, [], "n")  # note is keyword-only


def test_post_init_still_checks_and_the_instance_stays_frozen() -> None:
    with pytest.raises(ValueError, match="count must be 0 or more"):
        Quick("a", -1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Quick("a").name = "b"  # type: ignore[misc]


def test_usage_built_by_the_quick_init_adds_up_and_stays_frozen() -> None:
    total = Usage(10, 2, 1) + Usage(5, 1, 1, cached_tokens=4)
    assert total == Usage(prompt_tokens=15, completion_tokens=3, calls=2, cached_tokens=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        total.calls = 3  # type: ignore[misc]
