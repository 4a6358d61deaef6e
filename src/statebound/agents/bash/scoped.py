"""``stateflow-scoped``: an InterCode-Bash machine that builds the command a part at a time, each
part chosen by the model from candidates the task set and the sandbox supply (our extension;
agent ``stateflow-scoped``, and ``stateflow-scoped-random`` with seeded random choices, the
control).

- ``Init`` lists the sandbox's files and directories (one ``find`` over ``/``, system directories
  left out) and asks the shell which of the vocabulary's programs it has (``command -v``), in
  one action;
- ``Path`` picks the file or directory the command acts on, among the paths the question names
  (as written, or listed in the sandbox: "the testbed directory" names ``/testbed``); with none,
  the command acts on no path;
- ``Program`` picks the program the command starts with, among the vocabulary's heads
  (:mod:`statebound.agents.bash.vocabulary`: the other tasks' gold commands) that the shell has;
- ``Head`` picks that program's flags and operands: one of its head templates with the slots
  filled by the chosen path and the question's patterns, quoted strings and numbers
  (:mod:`statebound.agents.bash.reading`). Only heads that act on the chosen path are offered
  (only heads without one when there is none), and when the question gives a file pattern, only
  those that use one (and in ``Program`` only their programs);
- ``Clause`` (``compose=True``, agent ``stateflow-scoped-compose``): a ``find`` on a path is not
  one of the vocabulary's heads but ``find PATH`` and then its clauses, one at a time, among the
  clauses of every find head in the vocabulary (``-type f``, ``-name @PATTERN@``, ``-size
  +@N@k``...), or the head's end, or a ``|`` (at most :data:`MAX_CLAUSES`). A clause that changes
  files (``-delete``, ``-exec rm``...) is offered only when the question asks for a change, and
  while the question gives a file pattern the head does not use, only the clauses that use one;
- ``More`` picks whether the command ends there or a ``|`` follows (at most :data:`MAX_PIPES`);
  ``PipeProgram`` then picks the next stage's program and ``Pipe`` its flags, among the
  vocabulary's pipe templates;
- ``Run`` executes the command. A command that fails, or prints nothing when the question asks
  for no change to the files, is revised while :data:`MAX_RUNS` allow: first another ``Head`` of
  the same program (a composed find: another ``Program`` at once), then another ``Program``.
  Anything else is submitted (``Submit``).

What the run has established is its flow variables (:class:`Established`): each tool writes
what the sandbox shows (``ToolResult(update=...)``), each pick what it chose (an ``Established``
method), each declaring the fields it writes.

Every choice scores its candidates as continuations of a shell transcript, a few examples of our
own (:data:`EXAMPLES`) then a comment with the question and ``$`` with the command so far; the
path, as the continuation of ``# The file or directory:``. Paths are compared by their mean
token score (the question's path is copied), the other parts by their total log-probability.
``Pick`` records every choice with its candidates and scores.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from statebound.agents.bash.reading import SlotValues, asks_for_change, named_or_listed, slot_values
from statebound.agents.bash.tools import Outcome, step_outcome
from statebound.agents.bash.vocabulary import (
    GLOB_IN_PATH,
    NUMBER,
    PATH,
    PATTERN,
    SLOTS,
    TEXT,
    Vocabulary,
    program_of,
)
from statebound.agents.budget import transitions_for
from statebound.envs.bash import format_execute
from statebound.flow import (
    CallTool,
    ChoiceMethod,
    Flow,
    Pick,
    Rule,
    RunContext,
    State,
    ToolResult,
    always,
)
from statebound.llm.scoring import Normalization

__all__ = [
    "END",
    "EXAMPLES",
    "MAX_CLAUSES",
    "MAX_PIPES",
    "MAX_RUNS",
    "PIPE",
    "RUN",
    "SUBMIT",
    "Established",
    "Ran",
    "build_scoped",
    "fill",
    "init_command",
]

MAX_PIPES = 3
MAX_RUNS = 3
MAX_CLAUSES = 4  # clauses a composed find head takes, at most
MAX_FILLS = 6  # ways to fill one template's slots, at most
# More's two candidates: the command ends (the transcript's next line is a comment), or a pipe follows
END, PIPE = "\n#", " |"
_SYSTEM_DIRS = ("proc", "usr", "dev", "etc", "tmp", "sys", "lib", "lib64", "bin", "sbin")
_LISTING = ("find / -mindepth 1 \\( " + " -o ".join(f"-path /{d}" for d in _SYSTEM_DIRS)
            + " \\) -prune -o -printf '%y %p\\n'")
_LISTED = re.compile(r"^[a-z] (/.*)$")
_BARE_GLOB = re.compile(r"^[\w.*?-]+$")
# find clauses that change files: offered only when the question asks for a change
_CHANGING_CLAUSE = re.compile(r"^-delete$|^-(?:exec|execdir|ok) (?:rm|rmdir|mv|cp|chmod|chown|chgrp|rename|ln|touch|"
                              r"mkdir|sh|tar|gzip|truncate)\b")
EXAMPLES = """\
# Count the lines of all ".log" files under /var/app
$ find /var/app -name '*.log' | xargs cat | wc -l
# Delete the empty files in the /data/cache directory tree
$ find /data/cache -type f -empty -delete
# Show the disk usage of /home/user/music
$ du -sh /home/user/music
# List the files under /srv containing the word "error", ignoring case
$ grep -ril error /srv
# Print the first 3 lines of "/home/user/notes.txt"
$ head -n 3 /home/user/notes.txt
# Print the 2 largest files in /data
$ find /data -type f -exec du -a {} + | sort -nr | head -2
# Convert "Hello World" to upper case
$ echo 'Hello World' | tr a-z A-Z
# Find the ".tmp" files in /var/app modified more than 3 days ago
$ find /var/app -name '*.tmp' -mtime +3
"""


# -- what the run has established: the machine's flow variables ---------------------------------
@dataclass(frozen=True, slots=True)
class Ran:
    """A command run, and how it went (:data:`~statebound.agents.bash.tools.Outcome`)."""

    command: str
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Established:
    """The run so far: the machine's flow variables (``Flow(vars=Established)``). Its tools write
    what the sandbox shows (their ``ToolResult(update=...)``), each pick what it chose (the
    ``choose_*`` and ``add_*`` methods, given the text picked, None when there was nothing to
    pick); nothing is read back from the history."""

    listed: tuple[str, ...] = ()
    programs: tuple[str, ...] = ()  # the vocabulary's programs the shell has
    path: str | None = None
    program: str | None = None
    head: str | None = None
    clauses: int = 0  # clauses added to a composed find head
    pipes: tuple[str, ...] = ()
    pipe_program: str | None = None  # chosen for the stage being built
    more: bool | None = None  # the latest More choice: a pipe follows (None: not asked since the last stage)
    runs: tuple[Ran, ...] = ()
    tried_programs: tuple[str, ...] = ()
    tried_heads: tuple[str, ...] = ()
    exhausted: bool = False  # a choice found nothing left to try
    done: bool = False

    @property
    def command(self) -> str:
        return " | ".join([self.head or "", *self.pipes])

    @property
    def ran_current(self) -> bool:
        """The command as it stands has been run."""
        return bool(self.runs) and self.runs[-1].command == self.command and self.head is not None

    # -- what each pick changes --------------------------------------------------------------------
    def choose_path(self, text: str | None) -> dict[str, Any]:
        return {"path": (text or "").strip() or None}

    def choose_program(self, text: str | None) -> dict[str, Any]:
        """Another program starts the command over; none left to try ends the run."""
        if text is None:
            return {"exhausted": True}
        tried = self.tried_programs if self.program is None else (*self.tried_programs, self.program)
        return {"tried_programs": tried, "program": text.strip(), "head": None, "pipes": (), "more": None,
                "tried_heads": (), "clauses": 0}

    def choose_head(self, text: str | None) -> dict[str, Any]:
        """Another head starts the command over; none left to try ends the run."""
        if text is None:
            return {"exhausted": True}
        tried = self.tried_heads if self.head is None else (*self.tried_heads, self.head)
        return {"tried_heads": tried, "head": text.strip(), "pipes": (), "more": None, "clauses": 0}

    def add_clause(self, text: str | None) -> dict[str, Any]:
        """One more clause of a composed find, or its end (``END``, ``PIPE``: whether a pipe follows)."""
        if text is None or text in (END, PIPE):
            return {"more": text == PIPE}
        return {"head": f"{self.head} {text.strip()}", "clauses": self.clauses + 1}

    def choose_more(self, text: str | None) -> dict[str, Any]:
        return {"more": text == PIPE}

    def choose_pipe_program(self, text: str | None) -> dict[str, Any]:
        """The next stage's program; none: the command ends here."""
        return {"pipe_program": None, "more": False} if text is None else {"pipe_program": text.strip()}

    def add_pipe(self, text: str | None) -> dict[str, Any]:
        """The next stage; none: the command ends here."""
        if text is None:
            return {"pipe_program": None, "more": False}
        return {"pipes": (*self.pipes, text.strip()), "pipe_program": None, "more": None}


Choice = Callable[[Established, str | None], dict[str, Any]]  # one of the methods above
HEAD_WRITES = ("tried_heads", "head", "pipes", "more", "clauses", "exhausted")  # Established.choose_head's
PROGRAM_WRITES = ("tried_programs", "program", *HEAD_WRITES)  # Established.choose_program's


# -- tools: each returns what it establishes -------------------------------------------------------
def _act(ctx: RunContext[Established], action: str, **data: Any) -> ToolResult:
    """Send ``action`` to the sandbox: its observation, and whether the episode is over."""
    step = ctx.deps.step(action)
    outcome = step_outcome(step)
    return ToolResult(f"Observation: {step.observation}", ok=outcome != "error",
                      data={"action": action, "outcome": outcome, "done": step.done, **data},
                      update={"done": ctx.vars.done or step.done})


def _establishing(result: ToolResult, data: Mapping[str, Any], update: Mapping[str, Any]) -> ToolResult:
    """``result`` with more ``data`` and more fields to write."""
    return dataclasses.replace(result, data={**result.data, **data}, update={**(result.update or {}), **update})


def init_command(programs: Sequence[str]) -> str:
    """The Init action's command: the listing, then ``command -v`` for ``programs``."""
    return f"{_LISTING}; command -v {' '.join(shlex.quote(p) for p in programs)}"


def initial_tool(vocabulary: Vocabulary) -> CallTool:
    """Init's tool: the sandbox's files and directories, and the vocabulary's programs the shell has."""
    wanted = sorted({program_of(t) for t in (*vocabulary.heads, *vocabulary.pipes)})

    def look(ctx: RunContext[Established]) -> ToolResult:
        result = _act(ctx, format_execute(init_command(wanted)))
        lines = (ctx.deps.last_output or "").splitlines()
        paths = [m[1] for line in lines if (m := _LISTED.match(line))]
        found = {line.rsplit("/", 1)[-1] for line in lines if not _LISTED.match(line)}
        programs = [p for p in wanted if p in found]
        return _establishing(result, {"paths": paths, "programs": programs},
                             {"listed": tuple(paths), "programs": tuple(programs)})

    return CallTool(look, name="bash", writes=("listed", "programs", "done"))


def run_command(ctx: RunContext[Established]) -> ToolResult:
    command = ctx.vars.command
    result = _act(ctx, format_execute(command), command=command)
    return _establishing(result, {}, {"runs": (*ctx.vars.runs, Ran(command, result.data["outcome"]))})


def submit(ctx: RunContext[Established]) -> ToolResult:
    return _act(ctx, "submit")


RUN = CallTool(run_command, name="bash", writes=("runs", "done"))
SUBMIT = CallTool(submit, name="bash", writes=("done",))


# -- candidates ------------------------------------------------------------------------------------
def _values(ctx: RunContext, now: Established) -> SlotValues:
    return slot_values(ctx.task, now.listed)


def fill(template: str, values: SlotValues, path: str | None) -> list[str]:
    """``template`` with its slots filled in every way ``values`` and ``path`` allow (at most
    :data:`MAX_FILLS`); none when a slot has no value. Patterns and texts are quoted for the
    shell, but a pattern in a directory (``@PATH@/@PATTERN@``) is left for it to expand."""
    pools = {PATH: [path] if path else [], PATTERN: [shlex.quote(p) for p in values.patterns],
             TEXT: [shlex.quote(t) for t in values.texts], NUMBER: list(values.numbers)}
    if GLOB_IN_PATH in template:
        pools[PATTERN] = [p for p in values.patterns if _BARE_GLOB.match(p)]
    words = template.split()
    slotted = [(i, slot) for i, word in enumerate(words) for slot in SLOTS if slot in word]
    filled = []
    for combination in itertools.islice(itertools.product(*(pools[slot] for _, slot in slotted)), MAX_FILLS):
        out = list(words)
        for (i, slot), value in zip(slotted, combination):
            out[i] = out[i].replace(slot, value, 1)
        filled.append(" ".join(out))
    return filled


def _heads(vocabulary: Vocabulary, ctx: RunContext, now: Established) -> list[str]:
    """The heads the shell can run, filled: with a path chosen, those that act on it; those that
    use a file pattern the question gives first, alone when there are any (a question that names
    ``*.php`` files asks for them)."""
    values = _values(ctx, now)
    templates = [t for t in vocabulary.heads if program_of(t) in now.programs
                 and (PATH in t) == (now.path is not None)]
    with_pattern = [t for t in templates if PATTERN in t] if values.patterns else []
    return list(dict.fromkeys(h for t in with_pattern or templates for h in fill(t, values, now.path)))


def _pipes(vocabulary: Vocabulary, ctx: RunContext, now: Established) -> list[str]:
    values = _values(ctx, now)
    return list(dict.fromkeys(s for t in vocabulary.pipes if program_of(t) in now.programs
                              for s in fill(t, values, None) if s not in now.pipes))


def path_candidates(ctx: RunContext) -> list[str]:
    return [" " + p for p in named_or_listed(ctx.task, ctx.vars.listed)]


def program_candidates(vocabulary: Vocabulary) -> Callable[[RunContext], list[str]]:
    def candidates(ctx: RunContext) -> list[str]:
        now = ctx.vars
        tried = {*now.tried_programs, *([now.program] if now.program else [])}
        return [" " + p for p in dict.fromkeys(map(program_of, _heads(vocabulary, ctx, now))) if p not in tried]

    return candidates


def head_candidates(vocabulary: Vocabulary, *, compose: bool = False) -> Callable[[RunContext], list[str]]:
    """The chosen program's heads; ``compose``: a ``find`` on a path is only ``find PATH``, its
    clauses then chosen one at a time (:func:`clause_candidates`)."""
    def candidates(ctx: RunContext) -> list[str]:
        now = ctx.vars
        tried = {*now.tried_heads, *([now.head] if now.head else [])}
        heads = fill(f"find {PATH}", _values(ctx, now), now.path) if _composing(now, compose) else [
            h for h in _heads(vocabulary, ctx, now) if program_of(h) == now.program]
        return [" " + h for h in heads if h not in tried]

    return candidates


def clause_candidates(vocabulary: Vocabulary) -> Callable[[RunContext], list[str]]:
    """The head ends (``END``), a pipe follows (``PIPE``), or one more find clause, filled from the
    question, that the head does not have yet; one that changes files only if the question asks
    for a change. While the question gives a file pattern the head does not use, only the
    clauses that use one (as :func:`_heads` offers only such heads)."""
    def candidates(ctx: RunContext) -> list[str]:
        now = ctx.vars
        values, head, changes = _values(ctx, now), f"{now.head} ", asks_for_change(ctx.task)
        templates = [t for t in vocabulary.clauses if changes or not _CHANGING_CLAUSE.match(t)]
        unused = values.patterns and not any(shlex.quote(p) in head for p in values.patterns)
        with_pattern = [t for t in templates if PATTERN in t] if unused else []
        templates, ends = (with_pattern, []) if with_pattern else (templates, [END, PIPE])
        clauses = (c for t in templates for c in fill(t, values, now.path))
        return [*ends, *dict.fromkeys(" " + c for c in clauses if f" {c} " not in head)]

    return candidates


def _composing(now: Established, compose: bool) -> bool:
    """Whether the head is a find composed a clause at a time (``compose``, a find on a path)."""
    return compose and now.program == "find" and now.path is not None


def pipe_program_candidates(vocabulary: Vocabulary) -> Callable[[RunContext], list[str]]:
    def candidates(ctx: RunContext) -> list[str]:
        now = ctx.vars
        return [" " + p for p in dict.fromkeys(map(program_of, _pipes(vocabulary, ctx, now)))]

    return candidates


def pipe_candidates(vocabulary: Vocabulary) -> Callable[[RunContext], list[str]]:
    def candidates(ctx: RunContext) -> list[str]:
        now = ctx.vars
        return [" " + s for s in _pipes(vocabulary, ctx, now) if program_of(s) == now.pipe_program]

    return candidates


# -- transitions: small named conditions on the command so far -------------------------------------
def _when(label: str, test: Callable[[Established], bool], *reads: str) -> Rule:
    """A transition's condition on the variables (``now``), and the fields it reads (declared: the
    bytecode of a lambda over ``now`` shows none)."""
    return Rule(lambda ctx: test(ctx.vars), label, reads=reads)


EPISODE_OVER = _when("episode over", lambda now: now.done, "done")
NOTHING_LEFT = _when("nothing left to try", lambda now: now.exhausted, "exhausted")
MORE_UNDECIDED = _when("a pipe may follow", lambda now: now.more is None and len(now.pipes) < MAX_PIPES, "more", "pipes")
PIPE_FOLLOWS = _when("a pipe follows", lambda now: bool(now.more), "more")
STAGE_PROGRAM_CHOSEN = _when("its program chosen", lambda now: now.pipe_program is not None, "pipe_program")


def _failed(ctx: RunContext[Established]) -> bool:
    """The last run failed, or printed nothing when the question asks for no change to the files."""
    last = ctx.vars.runs[-1]
    return last.outcome == "error" or (last.outcome == "empty" and not asks_for_change(ctx.task))


SUBMIT_NOW = Rule(lambda ctx: not _failed(ctx) or len(ctx.vars.runs) >= MAX_RUNS, "output, or no run left")


def _clause_due(compose: bool) -> Rule:
    return _when("a clause may follow", lambda now: _composing(now, compose) and not now.pipes and now.more is None
                 and now.clauses < MAX_CLAUSES, "program", "path", "pipes", "more", "clauses")


def _another_program(compose: bool) -> Rule:
    return _when("heads tried, or a composed find", lambda now: bool(now.tried_heads) or _composing(now, compose),
                 "tried_heads", "program", "path")


# -- prompts ---------------------------------------------------------------------------------------
def _transcript(ctx: RunContext, tail: str) -> str:
    return f"{EXAMPLES}# {' '.join(ctx.task.split())}\n{tail}"


def _path_prompt(ctx: RunContext) -> str:
    return _transcript(ctx, "# The file or directory:")


def _command_prompt(ctx: RunContext) -> str:
    """``$`` and the command so far: nothing before Program and Head, through the stage being
    built and ``|`` before PipeProgram and Pipe."""
    now = ctx.vars
    if ctx.state in ("Program", "Head"):
        return _transcript(ctx, "$")
    command = now.command + (" |" if ctx.state in ("PipeProgram", "Pipe") else "")
    return _transcript(ctx, f"$ {command}")


def _pick(name: str, candidates: Callable[[RunContext], list[str]], chooser: ChoiceMethod, choice: Choice,
          writes: Sequence[str], *, normalization: Normalization = "sum",
          prompt: Callable[[RunContext], str] = _command_prompt) -> Pick:
    """The pick of one part; ``choice`` (an :class:`Established` method) says what the text picked
    changes, ``writes`` which fields that may be."""
    return Pick(candidates, prompt=prompt, method=chooser, name=name, normalization=normalization,
                when_empty="(none)", update=lambda ctx, text: choice(ctx.vars, text), writes=writes)


def build_scoped(*, chooser: ChoiceMethod = "auto", max_turns: int = 10,
                 vocabulary: Vocabulary, compose: bool = False, **_: Any) -> Flow:
    """The machine (module docstring) over ``vocabulary``. ``chooser``: how every part is chosen
    (a :class:`~statebound.flow.Pick` method: ``"auto"``, the best the model can run; ``"score"``,
    the model's scores; ``"label"``, ``"grammar"``; ``"random"``, the control). ``compose``: a find on a path is built a clause at a time, from the clauses of
    every find head in ``vocabulary``, instead of as one of those heads. ``max_turns`` is
    the environment's action limit; other options (``max_tokens``, ``response_format``) do not
    apply: nothing is generated."""
    def acting(name: str, tool: CallTool, exits: list[tuple[Rule, str]]) -> State:
        return State(name, outputs=[tool], transitions=[(EPISODE_OVER, "End"), *exits])

    stage_end = [(PIPE_FOLLOWS, "PipeProgram"), (always(), "Run")]
    states = [
        acting("Init", initial_tool(vocabulary), [(always(), "Path")]),
        State("Path", outputs=[_pick("path", path_candidates, chooser, Established.choose_path, ["path"],
                                     normalization="mean", prompt=_path_prompt)],
              transitions=[(always(), "Program")]),
        State("Program", outputs=[_pick("program", program_candidates(vocabulary), chooser, Established.choose_program,
                                        PROGRAM_WRITES)],
              transitions=[(NOTHING_LEFT, "Submit"), (always(), "Head")]),
        State("Head", outputs=[_pick("head", head_candidates(vocabulary, compose=compose), chooser,
                                     Established.choose_head, HEAD_WRITES)],
              transitions=[(NOTHING_LEFT, "Submit"), *([(_clause_due(compose), "Clause")] if compose else []),
                           (always(), "More")]),
        *([State("Clause", outputs=[_pick("clause", clause_candidates(vocabulary), chooser, Established.add_clause,
                                          ["more", "head", "clauses"])],
                 transitions=[(_clause_due(compose), "Clause"), (MORE_UNDECIDED, "More"), *stage_end])]
          if compose else []),
        State("More", outputs=[_pick("more", lambda ctx: [END, PIPE], chooser, Established.choose_more, ["more"])],
              transitions=stage_end),
        State("PipeProgram", outputs=[_pick("pipe-program", pipe_program_candidates(vocabulary), chooser,
                                            Established.choose_pipe_program, ["pipe_program", "more"])],
              transitions=[(STAGE_PROGRAM_CHOSEN, "Pipe"), (always(), "Run")]),
        State("Pipe", outputs=[_pick("pipe", pipe_candidates(vocabulary), chooser, Established.add_pipe,
                                     ["pipes", "pipe_program", "more"])],
              transitions=[(MORE_UNDECIDED, "More"), (always(), "Run")]),
        acting("Run", RUN, [(SUBMIT_NOW, "Submit"), (_another_program(compose), "Program"), (always(), "Head")]),
        acting("Submit", SUBMIT, [(always(), "End")]),
        State("End", final=True),
    ]
    name = "stateflow-scoped" + ("-compose" if compose else "") + ("" if chooser in ("auto", "score") else f"-{chooser}")
    return Flow(name=name, initial="Init", states=states, vars=Established,
                max_turns=transitions_for(max_turns, per_action=8, outside=10))
