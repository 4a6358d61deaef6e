"""One retry policy for provider faults: exponential back-off with jitter, Retry-After honoured.

A backend wraps each provider call in :func:`call_with_retries` and supplies a ``classify``
function that turns a provider exception into a :class:`Fault` (retryable or not, a description,
the server's Retry-After if any, and the :class:`~statebound.errors.ProviderError` subclass that
names its cause), or returns ``None`` for exceptions that are not provider faults (those propagate
unchanged). When retries run out, or the fault is not retryable, that error is raised; secrets are
redacted from its message and from the retry log, and the original exception is not chained (it
may hold them).
"""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_exponential, wait_random

from statebound.errors import ProviderError
from statebound.llm.secrets import Secret, redact

__all__ = ["Fault", "RetryPolicy", "call_with_retries", "parse_retry_after"]

log = logging.getLogger("statebound.llm.retry")
T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How often and how patiently to retry. ``attempts`` counts the first try."""

    attempts: int = 4
    initial_wait: float = 0.5
    max_wait: float = 20.0
    max_retry_after: float = 60.0  # never sleep longer than this, whatever the server says

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts must be at least 1")


@dataclass(frozen=True, slots=True)
class Fault:
    """What went wrong with one provider call, as a backend classifies it."""

    message: str
    retryable: bool
    retry_after: float | None = None
    kind: type[ProviderError] = ProviderError  # raised when retries do not help


class _ClassifiedFault(Exception):
    def __init__(self, fault: Fault) -> None:
        super().__init__(fault.message)
        self.fault = fault


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date)."""
    if not headers:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None  # unreadable: fall back to our own back-off
    return max(0.0, when.timestamp() - time.time())


def _wait(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    backoff = wait_exponential(multiplier=policy.initial_wait, max=policy.max_wait) + wait_random(
        0, policy.initial_wait
    )

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, _ClassifiedFault) and error.fault.retry_after is not None:
            return min(error.fault.retry_after, policy.max_retry_after)
        return backoff(state)

    return wait


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    provider: str,
    classify: Callable[[Exception], Fault | None],
    policy: RetryPolicy = RetryPolicy(),
    secrets: tuple[Secret | str | None, ...] = (),
) -> T:
    """Run ``call`` until it succeeds, the fault is not retryable, or attempts run out."""
    try:  # the usual case, without setting up the retry machinery
        return await call()
    except Exception as error:  # noqa: BLE001 - classified below, exactly as in the retry loop
        if classify(error) is None:
            raise
        first_failure: Exception | None = error

    async def attempt_call() -> T:
        nonlocal first_failure
        if first_failure is not None:  # attempt 1 is the one that just failed
            failure, first_failure = first_failure, None
            raise failure
        return await call()

    def log_retry(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning(
            "%s: %s; attempt %d of %d, retrying in %.2f s",
            provider,
            redact(str(error), *secrets),
            state.attempt_number,
            policy.attempts,
            wait,
        )

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.attempts),
        wait=_wait(policy),
        retry=retry_if_exception(lambda e: isinstance(e, _ClassifiedFault) and e.fault.retryable),
        before_sleep=log_retry,
        reraise=True,
    )
    attempts = 0
    try:
        async for attempt in retrying:
            with attempt:
                attempts = attempt.retry_state.attempt_number
                try:
                    return await attempt_call()
                except Exception as error:
                    fault = classify(error)
                    if fault is None:  # not a provider fault (a bug, a cancellation): as is
                        raise
                    raise _ClassifiedFault(fault) from None
    except _ClassifiedFault as failure:
        message = redact(failure.fault.message, *secrets)
        raise failure.fault.kind(message, provider=provider, attempts=attempts) from None
    raise ProviderError("no attempt was made", provider=provider, attempts=0)  # unreachable
