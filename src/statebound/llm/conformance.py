"""A backend checked against the :class:`~statebound.llm.base.LLM` protocol, with errors that name
what is missing and how to write it.

A custom backend is any object with ``model`` (a string), ``capabilities`` (a
:class:`~statebound.llm.base.Capabilities`) and ``async def complete(request) -> Completion``.
What goes wrong when one is written by hand: ``complete`` not async, a ``Completion`` built without
its ``model`` (a ``TypeError`` deep in the run), a ``Usage`` that leaves ``calls`` at 0 (the run
then reports no calls). :func:`check_llm` checks the object before a run; :func:`complete_checked`
checks each completion it returns.
"""

from __future__ import annotations

import inspect
from typing import Any

from statebound.errors import DefinitionError
from statebound.llm.base import LLM, Capabilities, Choice, Completion, Request, Usage

__all__ = ["BackendProtocolError", "check_llm", "check_completion", "complete_checked"]

_EXAMPLE = ("return Completion(choices=(Choice(text),), usage=Usage(prompt_tokens=..., completion_tokens=..., "
            "calls=1), model=self.model)")
_BUILT = ("Completion.__init__()", "Usage.__init__()", "Choice.__init__()")


class BackendProtocolError(DefinitionError):
    """A backend does not keep the LLM protocol (:mod:`statebound.llm.conformance`)."""


def _name(llm: object) -> str:
    return type(llm).__name__


def check_llm(llm: object) -> None:
    """Raise :class:`BackendProtocolError` naming what ``llm`` lacks of the protocol."""
    problems = []
    if not isinstance(getattr(llm, "model", None), str):
        problems.append("a `model` string attribute (the name usage, cost and reports show)")
    if not isinstance(getattr(llm, "capabilities", None), Capabilities):
        problems.append("a `capabilities` attribute (statebound.llm.Capabilities(completion=True, chat=True))")
    complete = getattr(llm, "complete", None)
    if complete is None:
        problems.append("an `async def complete(self, request) -> Completion` method")
    elif not inspect.iscoroutinefunction(complete):
        problems.append("`complete` declared `async def` (it is a plain function)")
    if problems:
        raise BackendProtocolError(f"{_name(llm)} is not an LLM backend: it needs {'; '.join(problems)}")


def check_completion(llm: object, completion: Any) -> Completion:
    """``completion`` if it keeps the protocol, else :class:`BackendProtocolError` naming the field."""
    if not isinstance(completion, Completion):
        raise BackendProtocolError(f"{_name(llm)}.complete returned a {type(completion).__name__}, not a Completion: {_EXAMPLE}")
    if not isinstance(completion.model, str) or not completion.model:
        raise BackendProtocolError(f"{_name(llm)}.complete returned a Completion without its model (Completion.model="
                                   f"{completion.model!r}): {_EXAMPLE}")
    if not isinstance(completion.usage, Usage):
        raise BackendProtocolError(f"{_name(llm)}.complete returned Completion.usage={completion.usage!r}, not a Usage: {_EXAMPLE}")
    if completion.usage.calls < 1:
        raise BackendProtocolError(f"{_name(llm)}.complete returned Usage.calls={completion.usage.calls}: each request counts as a "
                                   "call, so set Usage(..., calls=1)")
    if not completion.choices or not _all_choices(completion.choices):
        raise BackendProtocolError(f"{_name(llm)}.complete returned Completion.choices={completion.choices!r}: give a tuple of "
                                   "Choice, one per sample (request.n)")
    return completion


def _all_choices(choices: Any) -> bool:
    for choice in choices:  # a loop, not all(): checked on every call
        if not isinstance(choice, Choice):
            return False
    return True


async def complete_checked(llm: LLM, request: Request) -> Completion:
    """``await llm.complete(request)``, checked: a protocol slip is a :class:`BackendProtocolError`
    naming it (a ``Completion``, ``Usage`` or ``Choice`` built with a missing field, too)."""
    complete = getattr(llm, "complete", None)
    if complete is None:
        check_llm(llm)
    try:
        completion = await complete(request)  # type: ignore[misc]
    except TypeError as error:
        if str(error).startswith(_BUILT):
            raise BackendProtocolError(f"{_name(llm)}.complete: {error}: {_EXAMPLE}") from error
        raise
    return check_completion(llm, completion)
