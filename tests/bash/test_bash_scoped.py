"""stateflow-scoped on InterCode-Bash: the transition table state by state with a scorer double
that wants a given command, the candidates on the real sandbox, the random control without a
model, and (integration) the real embedded model."""

from __future__ import annotations

import dataclasses
import re

import pytest
from bash_doubles import needs_sandbox

from statebound.agents.bash.scoped import END, PIPE, Established, Ran, build_scoped, initial_tool
from statebound.agents.bash.vocabulary import Vocabulary
from statebound.bench.evaluate import run_task
from statebound.envs.bash import BashEnv
from statebound.flow import Flow, State, always, check_flow
from statebound.llm.testing import ScriptedLLM

_COMMAND = re.compile(r"\$ ?(.*)$")


def wanting(*commands: str, path: str = "/testbed") -> ScriptedLLM:
    """A scorer double that builds the first of ``commands`` it can: a candidate scores
    -1 - 0.1 * rank in all (spread over its words) when the command so far followed by it starts
    the command of that rank (``END``: is it), else -9; the path ``path`` scores -1, others -9."""

    def scorer(prompt: str, text: str) -> list[float]:
        words = len(text.split())
        total = -9.0
        so_far = _COMMAND.search(prompt.rsplit("\n", 1)[-1])
        built = so_far[1].strip() if so_far else ""
        candidate = f"{built}{text}".strip()
        if prompt.endswith("# The file or directory:"):
            total = -1.0 if text.strip() == path else -9.0
        else:
            for rank, command in enumerate(commands):
                if built == command if text == END else command == candidate or command.startswith(candidate + " "):
                    total = -1.0 - 0.1 * rank
                    break
        return [total / words] * words

    return ScriptedLLM(scorer=scorer)


def states_of(result) -> list[str]:
    """The states that chose (assistant) or acted (tool), each visit once, in order."""
    seen: list[str] = []
    for entry in result.trajectory:
        if entry["role"] in ("assistant", "tool") and (not seen or seen[-1] != entry["state"]):
            seen.append(entry["state"])
    return seen


def commands_run(result) -> list[str]:
    return [e["command"] for e in result.trajectory if "command" in e]


@needs_sandbox
async def test_the_machine_builds_a_pipeline_stage_by_stage_and_submits_its_output():
    result = await run_task("intercode-bash", "stateflow-scoped", "1-22",
                            llm=wanting("find /testbed -name '*.php' | xargs cat | wc -l"))
    assert commands_run(result) == ["find /testbed -name '*.php' | xargs cat | wc -l"]
    assert states_of(result) == ["Init", "Path", "Program", "Head", "More", "PipeProgram", "Pipe", "More",
                                 "PipeProgram", "Pipe", "More", "Run", "Submit"]
    assert result.success and result.turns == 3  # the listing, the command and submit


@needs_sandbox
async def test_a_failed_command_is_revised_with_another_head_then_another_program():
    # "cat /workspace" fails (a directory) and cat has no other head for it: Head finds none
    # left, and the episode is submitted as it stands
    result = await run_task("intercode-bash", "stateflow-scoped", "3-14", llm=wanting("cat /workspace", path="/workspace"))
    assert commands_run(result) == ["cat /workspace"]
    assert states_of(result)[-4:] == ["More", "Run", "Head", "Submit"]
    # "print disk usage ..." asks for output: a find that prints nothing is revised with another
    # find head, whose output is then submitted
    nothing = "find /workspace -perm 777 -type f -exec ls -l {} \\;"
    something = "find /workspace -perm 400 -type f -exec ls -l {} \\;"
    result = await run_task("intercode-bash", "stateflow-scoped", "3-14", llm=wanting(nothing, something, path="/workspace"))
    assert commands_run(result) == [nothing, something]
    assert states_of(result)[-5:] == ["Run", "Head", "More", "Run", "Submit"]
    # a second empty run goes back to Program, which offers every other program
    result = await run_task("intercode-bash", "stateflow-scoped", "3-14",
                            llm=wanting(nothing, "find /workspace -nouser -exec rm {} +", "du -a /workspace",
                                        path="/workspace"))
    assert commands_run(result) == [nothing, "find /workspace -nouser -exec rm {} +", "du -a /workspace"]
    assert states_of(result)[-6:] == ["Run", "Program", "Head", "More", "Run", "Submit"]


@needs_sandbox
async def test_a_command_that_changes_files_may_print_nothing():
    result = await run_task("intercode-bash", "stateflow-scoped", "2-15",
                            llm=wanting("find /system/folder1 -name '*.log' -delete", path="/system/folder1"))
    assert len(commands_run(result)) == 1 and states_of(result)[-2:] == ["Run", "Submit"]


@needs_sandbox
async def test_compose_builds_a_find_a_clause_at_a_time_from_other_find_heads():
    # no other task's find head is "find @PATH@ -maxdepth 1 -type d" (3-4's gold); its clauses are there
    gold = "find /workspace -maxdepth 1 -type d"
    result = await run_task("intercode-bash", "stateflow-scoped-compose", "3-4", llm=wanting(gold, path="/workspace"))
    assert commands_run(result) == [gold] and result.success
    assert states_of(result) == ["Init", "Path", "Program", "Head", "Clause", "Run", "Submit"]
    clauses = [e["choice"] for e in result.trajectory if e.get("choice", {}).get("name") == "clause"]
    assert [c["candidates"][c["picked"]] for c in clauses] == [" -maxdepth 1", " -type d", END]
    assert clauses[0]["candidates"][:2] == [END, PIPE] and len(clauses[0]["candidates"]) > 20
    assert " -maxdepth 1" not in clauses[1]["candidates"]  # a clause the head has is not offered again
    assert " -delete" not in clauses[0]["candidates"]  # the question asks for no change to the files
    # a pipe after the clauses, and a failed find revised with another program, not another head
    piped = "find /workspace -type f -empty | wc -l"
    result = await run_task("intercode-bash", "stateflow-scoped-compose", "3-4",
                            llm=wanting(piped, path="/workspace"))
    assert commands_run(result) == [piped]
    assert states_of(result)[3:] == ["Head", "Clause", "PipeProgram", "Pipe", "More", "Run", "Submit"]
    failing = "find /workspace -nouser"  # prints nothing, and 3-4 asks for output
    result = await run_task("intercode-bash", "stateflow-scoped-compose", "3-4",
                            llm=wanting(failing, "du -a /workspace", path="/workspace"))
    assert commands_run(result) == [failing, "du -a /workspace"]
    assert states_of(result)[4:] == ["Clause", "Run", "Program", "Head", "More", "Run", "Submit"]


@needs_sandbox
async def test_compose_offers_clauses_that_change_files_when_the_question_asks_for_a_change():
    gold = "find /workspace -type f -size +1k -delete"  # 3-7: "locate and remove large files (> 1 KB) ..."
    result = await run_task("intercode-bash", "stateflow-scoped-compose", "3-7", llm=wanting(gold, path="/workspace"))
    assert commands_run(result) == [gold] and result.success


@needs_sandbox
async def test_compose_uses_the_questions_file_pattern_first():
    gold = "find /testbed -name '*.php' -type f | xargs cat | wc -l"  # 1-28: 'all ".php" files'
    result = await run_task("intercode-bash", "stateflow-scoped-compose", "1-28", llm=wanting(gold))
    assert commands_run(result) == [gold] and result.success
    first, second = [e["choice"] for e in result.trajectory if e.get("choice", {}).get("name") == "clause"][:2]
    assert first["candidates"] and all("'*.php'" in c for c in first["candidates"])  # no END before it
    assert second["candidates"][:2] == [END, PIPE]


@needs_sandbox
async def test_the_compose_control_builds_without_a_model():
    silent = ScriptedLLM()
    result = await run_task("intercode-bash", "stateflow-scoped-compose-random", "3-4", llm=silent)
    assert result.exit_reason == "final" and silent.requests == [] and commands_run(result)


@needs_sandbox
def test_init_lists_the_sandbox_and_the_programs_the_shell_has():
    vocabulary = Vocabulary(heads=("find @PATH@", "no-such-program-here @PATH@"), pipes=("wc -l",))
    flow = Flow(name="init", initial="Init", vars=Established, states=[
        State("Init", outputs=[initial_tool(vocabulary)], transitions=[(always(), "End")]),
        State("End", final=True)])
    env = BashEnv()
    env.reset("1-0")
    try:
        result = flow.run_sync("t", deps=env)
    finally:
        env.close()
    data = result.history[-1].data
    assert result.history[-1].ok and env.turns == 1
    assert "/testbed/hello.php" in data["paths"] and "/testbed" in data["paths"]
    assert not any(p.startswith(("/usr", "/proc")) for p in data["paths"])
    assert data["programs"] == ["find", "wc"] and result.vars.programs == ("find", "wc")  # the flow variables


@needs_sandbox
async def test_the_random_control_chooses_without_a_model_and_repeats_exactly():
    silent = ScriptedLLM()  # no replies and no scorer: any model call would fail
    first = await run_task("intercode-bash", "stateflow-scoped-random", "1-22", llm=silent)
    again = await run_task("intercode-bash", "stateflow-scoped-random", "1-22", llm=silent)
    assert first.exit_reason == "final" and silent.requests == []
    assert commands_run(first) == commands_run(again) and commands_run(first)
    methods = {e["choice"]["method"] for e in first.trajectory if "choice" in e}
    assert methods == {"random"}


def test_each_choice_writes_what_it_changes():
    def written(now: Established, *changes: dict) -> Established:
        for change in changes:
            now = dataclasses.replace(now, **change)
        return now

    now = Established(listed=("/t",), programs=("find",))
    for choice, text in ((Established.choose_path, " /t"), (Established.choose_program, " find"),
                         (Established.choose_head, " find /t"), (Established.choose_more, PIPE),
                         (Established.choose_pipe_program, " wc"), (Established.add_pipe, " wc -l"),
                         (Established.choose_more, END)):
        now = written(now, choice(now, text))
    assert (now.path, now.program, now.command, now.more) == ("/t", "find", "find /t | wc -l", False)
    now = written(now, {"runs": (Ran("find /t | wc -l", "output"),)})
    assert now.ran_current
    again = written(now, now.choose_head(" find /t -type f"))
    assert again.tried_heads == ("find /t",) and again.pipes == () and not again.ran_current
    assert written(again, again.choose_program(None)).exhausted
    assert written(again, again.add_pipe(None)).more is False
    composed = written(Established(head="find /t"), Established(head="find /t").add_clause(" -type f"))
    assert (composed.head, composed.clauses) == ("find /t -type f", 1)
    assert Established().command == ""


def test_every_state_declares_its_writes():
    flow = build_scoped(vocabulary=Vocabulary(heads=("find @PATH@",), pipes=("wc -l",)), compose=True)
    assert [d for d in check_flow(flow) if d.severity != "info"] == []
    writes = {state.name: {name for output in state.outputs for name in output.writes} for state in flow.states}
    every = {f.name for f in dataclasses.fields(Established)}
    assert set().union(*writes.values()) == every
    assert max(len(names) for names in writes.values()) < len(every) - 3  # none declares writing everything


@pytest.mark.integration
@needs_sandbox
async def test_the_embedded_model_builds_and_runs_a_command_from_its_own_scores():
    from statebound.llm import open_model

    result = await run_task("intercode-bash", "stateflow-scoped", "1-22", llm=open_model("smollm2"))
    assert result.exit_reason == "final" and commands_run(result)
    choices = [e["choice"] for e in result.trajectory if "choice" in e]
    assert {c["name"] for c in choices} >= {"path", "program", "head", "more"}
    scored = [c for c in choices if len(c["candidates"]) > 1]
    assert scored and all(c["method"] == "score" and len(c["scores"]) == len(c["candidates"]) for c in scored)
    assert all(c["scores"][c["picked"]] == max(s for s in c["scores"] if s is not None) for c in scored)
    assert commands_run(result)[0].startswith(next(c for c in choices if c["name"] == "head")["candidates"][
        next(c for c in choices if c["name"] == "head")["picked"]].strip())


@needs_sandbox
async def test_the_rules_declare_every_variable_they_read(monkeypatch):
    # the conditions are lambdas over the variables (``now``), where bytecode inference sees nothing
    from traced_reads import tracing_reads

    trace = tracing_reads(monkeypatch)
    for agent, task in (("stateflow-scoped-random", "1-22"), ("stateflow-scoped-compose-random", "3-4"),
                        ("stateflow-scoped-random", "3-14")):
        await run_task("intercode-bash", agent, task, llm=ScriptedLLM())
    assert {"more", "pipes"} <= trace.read["a pipe may follow"] and trace.read["episode over"] == {"done"}
    assert trace.undeclared() == {}
