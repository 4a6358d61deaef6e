"""What the decoding monitor reports: violations, corrections and the run's bookkeeping."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from statebound.llm.base import Usage

__all__ = ["Correction", "MonitorResult", "Segment", "Violation", "ViolationKind"]

ViolationKind = Literal[
    "wrong_state",  # a marker for a state that may not come next
    "repeated_marker",  # the current state's marker again, where a repeat is not allowed
    "missing_marker",  # text or a stop where a marker had to come first
    "after_final",  # text after the final state's content
    "env_marker",  # a marker inside text returned by the environment
]


@dataclass(frozen=True, slots=True)
class Violation:
    """One breach of the spec, found at ``position`` (a character offset in the transcript)."""

    kind: ViolationKind
    position: int
    found: str | None  # the offending state (None: text or end of text)
    expected: frozenset[str]
    state: str | None  # the state the run was in

    def describe(self) -> str:
        want = ", ".join(sorted(self.expected)) or "nothing more"
        got = self.found or "plain text"
        return f"{self.kind} at {self.position}: got {got} in state {self.state}; expected {want}"


@dataclass(frozen=True, slots=True)
class Correction:
    """Text the monitor appended to steer the model (valid-state prefixing or a forced marker)."""

    position: int
    prefix: str
    reason: Literal["violation", "boundary", "forced", "wrap_up", "choice"]


@dataclass(frozen=True, slots=True)
class Segment:
    """One state of the run and the text written for it."""

    state: str
    text: str


@dataclass(frozen=True)
class MonitorResult:
    """A finished run of the monitor, in any mode. ``transcript`` is exactly what the model saw and
    wrote (a model often writes no space after a marker: ``[Thought]I need``); ``readable`` is the
    same text with that space, for people."""

    mode: str
    transcript: str
    segments: tuple[Segment, ...]
    completed: bool  # the run reached a complete state of the behaviour
    conforms: bool  # the transcript, re-read from scratch, is a complete run of the spec
    stop_reason: Literal["complete", "budget", "end_of_text", "context"]
    violations: tuple[Violation, ...] = ()
    corrections: tuple[Correction, ...] = ()
    truncations: int = 0
    truncated_chars: int = 0
    extra_tokens: int = 0  # generated tokens that were thrown away (estimated by character share)
    llm_calls: int = 0
    env_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    readable: str = ""  # the transcript with a space after each marker that runs into its text


    @property
    def states(self) -> tuple[str, ...]:
        return tuple(s.state for s in self.segments)

    def content(self, state: str) -> str | None:
        """The text of the last segment in ``state`` (stripped), or None if the state never occurred."""
        for segment in reversed(self.segments):
            if segment.state == state:
                return segment.text.strip()
        return None
