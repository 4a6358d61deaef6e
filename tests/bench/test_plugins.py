"""Benchmarks, agents and models from another package, found by entry point like the bundled ones."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from statebound.bench.registry import benchmark_names, load_agents, load_benchmark
from statebound.errors import DefinitionError

PLUGIN = '''
"""A third-party benchmark: say a number's successor."""
from statebound.bench import AgentSpec, Benchmark, BenchmarkOptions, ExitReason, Grade, Task, Trace, TraceEntry
from statebound.envs.base import Score, StepResult
from statebound.llm.base import chat


class Options(BenchmarkOptions):
    count: int = 3


class Env:
    def reset(self, task_id):
        self.number, self.said = int(task_id), None
        return f"What comes after {self.number}?"

    def step(self, action):
        self.said = action.strip()
        return StepResult("ok", done=True)

    def score(self):
        ok = self.said == str(self.number + 1)
        return Score(float(ok), ok)

    def close(self):
        pass


class Successor(Benchmark[Options]):
    name = "successor"
    summary = "say the next number"
    Options = Options

    def tasks(self):
        return [Task(str(n), f"after {n}") for n in range(self.options.count)]

    def make_env(self, *, max_turns, **settings):
        return Env()

    def grade(self, env, task, trace):
        score = env.score()
        return Grade(reward=score.reward, success=score.success, turns=1)


class Ask:
    async def __call__(self, task, *, llm, env):
        reply = await llm.complete(chat(("user", task), max_tokens=8))
        env.step(reply.text)
        entries = (TraceEntry(state="Ask", role="user", content=task),
                   TraceEntry(state="Ask", role="assistant", content=reply.text, usage=reply.usage))
        return Trace(entries=entries, exit=ExitReason.FINAL, exit_state="Ask", usage=reply.usage)


AGENTS = {"ask": AgentSpec(build=lambda setup: Ask(), summary="asks the model once")}


def counter(request):
    import re
    return str(int(re.search(r"after ([0-9]+)", request.messages[-1].content)[1]) + 1)


def open_counter(name, options):
    from statebound.llm.testing import FunctionLLM
    return FunctionLLM(respond=counter, model=name)
'''

ENTRY_POINTS = """
[statebound.benchmarks]
successor = successor_plugin:Successor

[statebound.agents]
successor = successor_plugin:AGENTS

[statebound.models]
counter = successor_plugin:open_counter
"""


def _install(site: Path) -> None:
    """A minimal installed distribution: the module and its dist-info with entry points."""
    (site / "successor_plugin.py").write_text(textwrap.dedent(PLUGIN))
    info = site / "successor_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: successor-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)


def test_a_plugin_benchmark_runs_through_statebound_eval(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install(site)
    env = {**os.environ, "PYTHONPATH": str(site)}
    statebound = [str(Path(sys.executable).parent / "statebound")]
    listed = subprocess.run([*statebound, "eval", "successor", "--list-agents"], env=env, capture_output=True,
                            text=True, check=True)
    assert "ask  asks the model once" in listed.stdout and "count=3" in listed.stdout
    helped = subprocess.run([*statebound, "eval", "--help"], env={**env, "COLUMNS": "120"}, capture_output=True,
                            text=True, check=True)
    assert "successor: say the next number" in helped.stdout and "intercode-sql: " in helped.stdout
    out = tmp_path / "run"
    ran = subprocess.run([*statebound, "eval", "successor", "-a", "ask", "-m", "counter", "--no-progress",
                          "--no-plots", "-o", str(out)], env=env, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert "| ask | counter | 3 | 100.00 |" in ran.stdout
    assert "3 episodes run" in ran.stdout


def test_the_bundled_benchmarks_register_the_same_way() -> None:
    assert {"toy", "intercode-sql", "intercode-bash", "gsm8k", "hotpotqa", "alfworld"} <= set(benchmark_names())
    assert list(load_agents("toy")) == ["direct", "verify"]


def test_unknown_names_say_what_is_registered() -> None:
    with pytest.raises(DefinitionError, match=r"unknown benchmark 'intercode-sq'\. Did you mean 'intercode-sql'\?"):
        load_benchmark("intercode-sq")
    with pytest.raises(DefinitionError, match=r"toy has no option 'cont'; did you mean 'count'\?"):
        load_benchmark("toy", {"cont": 3})
    with pytest.raises(DefinitionError, match=r"toy option count=0: input should be greater than or equal to 1"):
        load_benchmark("toy", {"count": 0})
    with pytest.raises(DefinitionError, match=r"toy has no agent 'direkt'\. Did you mean 'direct'\? Its agents: direct, verify"):
        load_benchmark("toy").agent("direkt")
    with pytest.raises(DefinitionError, match=r"alfworld option max_steps is now --max-turns \(e\.g\. --max-turns 20\)"):
        load_benchmark("alfworld", {"max_steps": 20})
