"""The decoding monitor (paper section 2.2): generate, validate, correct, until the run completes.

    monitor = Monitor(spec, llm=llm, env={"Obs": run_tool})
    result = await monitor.run("What is 3 * 7?", prompt=few_shot_prompt)

Modes (same spec, same :class:`MonitorResult`):

- ``"posthoc"`` (the paper): the model writes chunks until an ``:env-input`` marker (a stop
  sequence) or ``chunk_tokens``; each chunk is split on markers and cut at the first violation,
  then generation resumes from a correction (``correction``, below).
- ``"grammar"``: the same loop, but each call carries a GBNF grammar built from the automaton so
  a local llama.cpp model cannot write markers out of order (the chunk is still validated).
- ``"eager"``: stop at every marker and re-prompt with the next marker (one call per state, and
  a short extra call to read the model's choice where several states may follow).
- ``"none"``: no enforcement; tools still run at ``:env-input`` markers. Conformance is judged
  afterwards, as in every mode, by re-reading the transcript from scratch.

Corrections (``MonitorConfig.correction``):

- ``"authors"`` (the default; IBM's ``ApiDecodingMonitor._process_state_changes``): a rejected
  or missing marker is replaced by the whole marker of the first valid next state (in the spec's
  order), and the common prefix of the valid markers is added only after environment input.
- ``"paper"`` (section 2.2): the common prefix of the valid next markers at every state boundary
  and after a violation; a full marker only after two corrections in a row that made no progress.

When the call budget nears its end (``max_calls``), every mode but ``"none"`` wraps the run up:
it forces the markers of a shortest path to completion and lets the model write their content.
A run whose prompt outgrows the model's context window (``ContextOverflow``, from the model or a
handler's own call) stops there, incomplete, with ``stop_reason="context"``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from statebound.errors import ContextOverflow, DefinitionError
from statebound.llm.base import LLM, Usage
from statebound.spec.automaton import Automaton
from statebound.spec.calls import continue_text
from statebound.spec.examples import transcript_conforms
from statebound.spec.grammar import to_gbnf
from statebound.spec.markers import MarkerIndex, common_prefix
from statebound.spec.model import Spec
from statebound.spec.results import Correction, MonitorResult, Segment, Violation
from statebound.spec.scan import Cursor, ScanOutcome, scan

__all__ = ["CORRECTIONS", "CorrectionStyle", "EnvHandler", "EnvRequest", "Mode", "Monitor", "MonitorConfig"]

Mode = Literal["posthoc", "grammar", "none", "eager"]
MODES: tuple[str, ...] = ("posthoc", "grammar", "none", "eager")
CorrectionStyle = Literal["authors", "paper"]
CORRECTIONS: tuple[str, ...] = ("authors", "paper")


@dataclass(frozen=True, slots=True)
class EnvRequest:
    """What an environment handler sees: the state to fill and the run so far."""

    state: str
    task: str
    segments: tuple[Segment, ...]
    transcript: str


EnvHandler = Callable[[EnvRequest], "str | Awaitable[str]"]


@dataclass(frozen=True, kw_only=True)
class MonitorConfig:
    mode: Mode = "posthoc"
    chunk_tokens: int = 128  # max tokens per model call (the paper's chunk size)
    max_calls: int = 24  # model calls before the run is wrapped up
    correction: CorrectionStyle = "authors"  # how a violation is corrected (see the module's docstring)
    boundary_prefix: bool = True  # prefix the common marker prefix at state boundaries (``correction``'s)
    stop_at_restart: bool = True  # also stop at markers that only ever start a run ("[Question]")
    choice_tokens: int = 8  # eager mode: tokens to read the model's choice of the next state
    temperature: float = 0.0
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise DefinitionError(f"unknown monitor mode {self.mode!r}: use one of {', '.join(MODES)}")
        if self.correction not in CORRECTIONS:
            raise DefinitionError(f"unknown monitor correction {self.correction!r}: use authors or paper")
        if self.chunk_tokens < 1 or self.max_calls < 1:
            raise DefinitionError("chunk_tokens and max_calls must be at least 1")


@dataclass
class _Run:
    """Mutable bookkeeping of one run."""

    task: str
    cursor: Cursor
    done: str = ""  # validated transcript
    pending: str = ""  # unvalidated tail: a dangling partial marker or a correction prefix
    finished: bool = False
    stop_reason: str = "complete"
    stalls: int = 0
    wrapping: bool = False
    violations: list[Violation] = field(default_factory=list)
    corrections: list[Correction] = field(default_factory=list)
    truncations: int = 0
    truncated_chars: int = 0
    extra_tokens: int = 0
    llm_calls: int = 0
    env_calls: int = 0
    usage: Usage = field(default_factory=Usage)

    def separator(self) -> str:
        return "" if not self.done or self.done[-1].isspace() else "\n"


class Monitor:
    """Runs a spec-bound agent: one LLM, handlers for ``:env-input`` states, one mode."""

    def __init__(self, spec: Spec, *, llm: LLM, env: Mapping[str, EnvHandler] | None = None,
                 config: MonitorConfig | None = None) -> None:
        self.spec = spec
        self.automaton: Automaton = spec.compile()
        self.llm = llm
        self.config = config or MonitorConfig()
        self.env = dict(env or {})
        self.index = MarkerIndex(spec.markers)
        self.env_states = frozenset(s.name for s in spec.env_states)
        missing = [name for name in self.env_states if name not in self.env]
        if missing and self.automaton.used_states & set(missing):
            raise DefinitionError(
                f"no environment handler for :env-input state(s) {', '.join(sorted(missing))}; "
                "pass env={'STATE': handler}"
            )
        self._env_markers = tuple(spec.marker(s) for s in sorted(self.env_states))
        # where the authors' monitor adds the common prefix: after text it was given (the task,
        # whose state opens every run, and each environment reply)
        self._input_states = self.env_states | self.automaton.next_states(self.automaton.start)
        inner = {s for n, out in self.automaton.edges.items() if n != self.automaton.start for s in out}
        openers = self.automaton.next_states(self.automaton.start) - inner
        self._stops = self._env_markers + (
            tuple(spec.marker(s) for s in sorted(openers)) if self.config.stop_at_restart else ())

    # -- public ---------------------------------------------------------------------------------
    async def run(self, task: str, *, prompt: str = "") -> MonitorResult:
        """Answer ``task`` (the first state's content); ``prompt`` holds instructions and examples."""
        run = self._start(task)
        loop = self._loop_eager if self.config.mode == "eager" else self._loop_chunks
        if self.config.mode == "none":
            loop = self._loop_free
        try:
            await loop(run, prompt)
        except ContextOverflow:
            run.stop_reason = "context"  # what was written stands; nothing more fits
        return self._result(run)

    # -- shared steps ---------------------------------------------------------------------------
    def _start(self, task: str) -> _Run:
        first = sorted(self.automaton.next_states(self.automaton.start), key=self._order)
        if len(first) != 1:
            raise DefinitionError(
                f"spec {self.spec.name!r} may start with {', '.join(first)}; the task text needs "
                "one initial state (begin the behaviour with a single state)"
            )
        node = self.automaton.edges[self.automaton.start][first[0]]
        run = _Run(task, Cursor(node, first[0], task, expect_marker=True))
        run.done = f"{self.spec.marker(first[0])} {task.strip()}\n"
        run.finished = self.automaton.is_terminal(node)
        return run

    def _order(self, state: str) -> int:
        return self.automaton.alphabet.index(state)

    def _wrapping(self, run: _Run) -> bool:
        """True once the remaining call budget only covers a shortest path to completion (sticky)."""
        if not run.wrapping:
            budget = run.llm_calls + self.automaton.distance[run.cursor.node]
            run.wrapping = budget >= self.config.max_calls
        return run.wrapping

    def _allowed(self, run: _Run) -> Callable[[int], frozenset[str]]:
        return self.automaton.finishing_next if self._wrapping(run) else self.automaton.next_states

    def _preferred(self, node: int) -> str:
        options = self.automaton.finishing_next(node) or self.automaton.next_states(node)
        return min(options, key=self._order)

    async def _generate(self, run: _Run, prompt: str, *, stop: tuple[str, ...], max_tokens: int,
                        grammar: str | None = None) -> tuple[str, str, int]:
        out = await continue_text(
            self.llm, prompt, run.done + run.pending, stop=stop, max_tokens=max_tokens,
            temperature=self.config.temperature, seed=self.config.seed, grammar=grammar,
        )
        run.llm_calls += 1
        run.usage = run.usage + out.usage
        return out.text, out.finish_reason, out.usage.completion_tokens

    async def _enter_env(self, run: _Run, state: str) -> None:
        run.done += run.separator() + self.spec.marker(state)
        node = self.automaton.edges[run.cursor.node][state]
        handler = self.env[state]
        reply = handler(EnvRequest(state, run.task, self._segments(run.done), run.done))
        text = str(await reply if inspect.isawaitable(reply) else reply).strip()
        run.env_calls += 1
        inner = next(self.index.find(text), None)
        if inner is not None:  # environment text is validated like model text
            run.violations.append(Violation("env_marker", len(run.done) + inner.start, inner.state,
                                            frozenset(), state))
            run.truncations += 1
            run.truncated_chars += len(text) - inner.start
            text = text[: inner.start].rstrip()
        run.done += f" {text}\n"
        run.cursor = Cursor(node, state, text, expect_marker=True)
        run.finished = self.automaton.is_terminal(node)

    def _first_valid(self, run: _Run) -> str:
        """IBM's ``get_valid_states()[0]``: the first state allowed next, in the spec's order."""
        return min(self._allowed(run)(run.cursor.node), key=self._order)

    def _boundary_prefix(self, run: _Run) -> bool:
        """Whether this state boundary gets the valid markers' common prefix: every one (paper), or
        only the one right after the task or environment input (the authors')."""
        return self.config.boundary_prefix and (
            self.config.correction == "paper" or run.cursor.state in self._input_states)

    def _correct(self, run: _Run, reason: str, *, progressed: bool) -> None:
        """The authors' correction: the first valid next state's whole marker. The paper's:
        valid-state prefixing; after repeated failures at one spot, force one full marker."""
        run.stalls = 0 if progressed else run.stalls + 1
        node = run.cursor.node
        options = self._allowed(run)(node)
        prefix = common_prefix(self.spec.marker(s) for s in options)
        if self.config.correction == "authors" and not self._wrapping(run):
            prefix, reason = self.spec.marker(self._first_valid(run)), "forced"
        elif run.stalls >= 2 or self._wrapping(run):
            prefix, reason = self.spec.marker(self._preferred(node)), "forced"
        run.pending = run.separator() + prefix
        run.corrections.append(Correction(len(run.done), prefix, reason))  # type: ignore[arg-type]

    def _commit(self, run: _Run, out: ScanOutcome, generated: str, tokens: int) -> None:
        run.done += out.kept
        run.cursor = out.cursor
        if out.violation is not None:
            run.violations.append(out.violation)
        if out.dropped.strip():
            run.truncations += 1
            run.truncated_chars += len(out.dropped)
            share = min(len(out.dropped), len(generated)) / max(len(generated), 1)
            run.extra_tokens += round(tokens * share)

    # -- posthoc and grammar --------------------------------------------------------------------
    async def _loop_chunks(self, run: _Run, prompt: str) -> None:
        grammar_mode = self.config.mode == "grammar"
        while not run.finished:
            allowed = self._allowed(run)
            wrapping = self._wrapping(run)
            node = run.cursor.node
            if wrapping and self.automaton.is_terminal(node):
                run.finished = True  # budget spent inside the final state: its text stands as written
                break
            if wrapping and not run.pending:
                forced = self._preferred(node)
                if forced in self.env_states:
                    await self._enter_env(run, forced)
                    continue
                run.pending = run.separator() + self.spec.marker(forced)
                run.corrections.append(Correction(len(run.done), self.spec.marker(forced), "wrap_up"))
            elif run.cursor.expect_marker and not run.pending and self._boundary_prefix(run) and not grammar_mode:
                prefix = common_prefix(self.spec.marker(s) for s in allowed(node))
                run.pending = run.separator() + prefix
                run.corrections.append(Correction(len(run.done), prefix, "boundary"))
            stop = self._stops + (tuple(self.index.markers) + ("\n",) if wrapping else ())
            grammar = None
            if grammar_mode:
                probe = scan(run.pending, run.cursor, automaton=self.automaton, index=self.index,
                             env_states=self.env_states, allowed=allowed)
                narrow = {n: allowed(n) for n in self.automaton.nodes} if wrapping else None
                grammar = to_gbnf(self.spec, self.automaton, probe.cursor.node, allowed=narrow,
                                  at_boundary=probe.cursor.expect_marker and not probe.entered)
            text, reason, tokens = await self._generate(
                run, prompt, stop=stop, max_tokens=self.config.chunk_tokens, grammar=grammar)
            chunk, run.pending = run.pending + text, ""
            before = (len(run.done), run.cursor)
            out = scan(chunk, run.cursor, automaton=self.automaton, index=self.index,
                       env_states=self.env_states, offset=len(run.done), allowed=allowed,
                       hold_tail=reason == "length" and not wrapping)
            self._commit(run, out, text, tokens)
            progressed = (len(run.done), run.cursor) != before
            if out.finished or (self.automaton.is_terminal(run.cursor.node) and (reason != "length" or wrapping)):
                run.finished = True
            elif out.violation is not None:
                self._correct(run, "violation", progressed=progressed)
            elif out.env_state is not None:
                await self._enter_env(run, out.env_state)
            elif wrapping:
                continue  # the next iteration forces the next marker on the way out
            elif reason == "length" and grammar_mode and out.pending:
                run.truncations += 1  # a marker cut by the chunk limit: the grammar writes it whole
                run.truncated_chars += len(out.pending)
            elif reason == "length":
                run.pending = out.pending
            else:
                await self._after_stop(run, allowed)

    async def _after_stop(self, run: _Run, allowed: Callable[[int], frozenset[str]]) -> None:
        """The model stopped: at an environment marker (a stop sequence), or at its end of text."""
        node = run.cursor.node
        envs = sorted(allowed(node) & self.env_states, key=self._order)
        if envs:
            await self._enter_env(run, envs[0])
        elif self.automaton.is_accepting(node):
            run.finished, run.stop_reason = True, "end_of_text"
        else:
            run.violations.append(Violation("missing_marker", len(run.done), None, allowed(node),
                                            run.cursor.state))
            self._correct(run, "violation", progressed=bool(run.cursor.content.strip()))

    # -- eager ----------------------------------------------------------------------------------
    async def _loop_eager(self, run: _Run, prompt: str) -> None:
        every_marker = tuple(self.index.markers)
        while not run.finished:
            node = run.cursor.node
            if run.cursor.expect_marker:
                options = self._allowed(run)(node)
                chosen = next(iter(options)) if len(options) == 1 else await self._choose(run, prompt, options)
                if chosen in self.env_states:
                    await self._enter_env(run, chosen)
                    continue
                run.done += run.separator() + self.spec.marker(chosen)
                run.cursor = Cursor(self.automaton.edges[node][chosen], chosen)
            terminal = self.automaton.is_terminal(run.cursor.node)
            stop = every_marker + (("\n",) if terminal or self._wrapping(run) else ())
            text, reason, _ = await self._generate(run, prompt, stop=stop, max_tokens=self.config.chunk_tokens)
            run.done += text
            run.cursor = Cursor(run.cursor.node, run.cursor.state, run.cursor.content + text)
            if terminal:
                run.finished = True
            elif reason != "length" or self._wrapping(run):
                run.cursor = Cursor(run.cursor.node, run.cursor.state, run.cursor.content, expect_marker=True)

    async def _choose(self, run: _Run, prompt: str, options: frozenset[str]) -> str:
        """Eager mode: let the model pick among several next states, reading a short continuation."""
        if self._wrapping(run):
            return self._preferred(run.cursor.node)
        prefix = common_prefix(self.spec.marker(s) for s in options)
        run.pending = run.separator() + prefix
        text, _, _ = await self._generate(run, prompt, stop=(), max_tokens=self.config.choice_tokens)
        run.pending = ""
        written = prefix + text
        matches = [s for s in options if written.startswith(self.spec.marker(s))]
        if matches:
            return max(matches, key=lambda s: len(self.spec.marker(s)))
        return self._preferred(run.cursor.node)

    # -- no enforcement -------------------------------------------------------------------------
    async def _loop_free(self, run: _Run, prompt: str) -> None:
        final_states = {s for n, out in self.automaton.edges.items() for s, t in out.items()
                        if self.automaton.is_terminal(t)}
        while not run.finished:
            if run.llm_calls >= self.config.max_calls:
                run.stop_reason = "budget"
                return
            text, reason, _ = await self._generate(run, prompt, stop=self._stops,
                                                   max_tokens=self.config.chunk_tokens)
            run.done += text
            states = self.index.states_in(text)
            if final_states & set(states):
                run.finished = True
            elif reason == "length":
                continue
            elif self.env_states:
                node = self.automaton.walk(self.index.states_in(run.done))
                valid = sorted(self.automaton.next_states(node) & self.env_states, key=self._order)
                state = (valid or sorted(self.env_states, key=self._order))[0]
                await self._free_env(run, state)
            else:
                run.finished, run.stop_reason = True, "end_of_text"

    async def _free_env(self, run: _Run, state: str) -> None:
        run.done += run.separator() + self.spec.marker(state)
        reply = self.env[state](EnvRequest(state, run.task, self._segments(run.done), run.done))
        text = str(await reply if inspect.isawaitable(reply) else reply).strip()
        run.env_calls += 1
        run.done += f" {text}\n"
        node = self.automaton.walk(self.index.states_in(run.done))
        run.finished = self.automaton.is_terminal(node)

    # -- result ---------------------------------------------------------------------------------
    def _segments(self, transcript: str) -> tuple[Segment, ...]:
        return tuple(Segment(s, t) for s, t in self.index.split(transcript)[1])

    def _result(self, run: _Run) -> MonitorResult:
        node = self.automaton.walk(self.index.states_in(run.done))
        completed = (node is not None and self.automaton.is_accepting(node)
                     and run.stop_reason not in ("budget", "context"))
        return MonitorResult(
            mode=self.config.mode,
            transcript=run.done,
            readable=self.index.spaced(run.done),
            segments=self._segments(run.done),
            completed=completed,
            conforms=transcript_conforms(self.spec, run.done, automaton=self.automaton),
            stop_reason=run.stop_reason,  # type: ignore[arg-type]
            violations=tuple(run.violations),
            corrections=tuple(run.corrections),
            truncations=run.truncations,
            truncated_chars=run.truncated_chars,
            extra_tokens=run.extra_tokens,
            llm_calls=run.llm_calls,
            env_calls=run.env_calls,
            usage=run.usage,
        )
