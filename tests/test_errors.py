"""statebound's exceptions survive pickling whole (a Ray worker raising one sends it to the driver):
the same type, message and attributes (a spec error's line and column, a provider error's provider
and attempts)."""

from __future__ import annotations

import inspect
import pickle

import pytest

from statebound import errors
from statebound.bench.identity import ConfigMismatch
from statebound.bench.store import RunNotFound
from statebound.envs.qa.calculator import CalculatorError

ERRORS = sorted(
    {cls for _, cls in inspect.getmembers(errors, inspect.isclass) if issubclass(cls, errors.StateboundError)}
    | {ConfigMismatch, RunNotFound, CalculatorError},
    key=lambda cls: cls.__name__,
)


def _sample(kind: type[errors.StateboundError]) -> errors.StateboundError:
    if issubclass(kind, errors.SpecError):
        return kind("unbalanced parenthesis", line=3, column=7, source_name="react.spec")
    if issubclass(kind, errors.ProviderError):
        return kind("HTTP 401, authentication failed", provider="openai-compatible http://x/v1", attempts=2)
    if issubclass(kind, errors.MCPServerError):
        return kind("it stopped answering", server="filesystem", stderr="npm warn: done")
    return kind("the cause, and the fix")


@pytest.mark.parametrize("kind", ERRORS, ids=lambda cls: cls.__name__)
def test_an_error_survives_pickling_whole(kind: type[errors.StateboundError]) -> None:
    error = _sample(kind)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is kind and str(copy) == str(error) and copy.args == error.args
    assert vars(copy) == vars(error)


def test_a_spec_error_keeps_its_position() -> None:
    error = errors.SpecError("unknown state 'Foo'", line=12, column=5, source_name="mine.spec")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.message, copy.line, copy.column, copy.source_name) == ("unknown state 'Foo'", 12, 5, "mine.spec")
    assert str(copy) == "mine.spec:12:5: unknown state 'Foo'"
