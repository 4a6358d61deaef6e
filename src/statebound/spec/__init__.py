"""Behaviour specs: parse the paper's s-expressions, compile them to an automaton, enforce them.

    from statebound.spec import parse, load_bundled, Monitor, MonitorConfig
    spec = load_bundled("react")            # or parse(text)
    automaton = spec.compile()
    automaton.accepts(["Ques", "Final-Tht", "Ans"])       # True
    automaton.valid_next(["Ques"])                          # frozenset({"Tht", "Final-Tht"})
    result = await Monitor(spec, llm=llm, env={"Obs": tool}).run("What is 2 + 2?", prompt=examples)
"""

from statebound.spec.automaton import Automaton, compile_formula
from statebound.spec.checks import Diagnostic, check_spec
from statebound.spec.draw import to_dot, to_mermaid
from statebound.spec.examples import Deviation, check_run, transcript_conforms, validate_examples
from statebound.spec.grammar import to_gbnf
from statebound.spec.library import BUNDLED, bundled_text, load_bundled
from statebound.spec.markers import MarkerIndex, common_prefix
from statebound.spec.model import Always, Formula, Next, Or, Spec, StateDef, StateRef, Until, render
from statebound.spec.monitor import (
    CorrectionStyle,
    EnvHandler,
    EnvRequest,
    Mode,
    Monitor,
    MonitorConfig,
)
from statebound.spec.parser import parse, parse_formula
from statebound.spec.results import Correction, MonitorResult, Segment, Violation

__all__ = [
    "BUNDLED",
    "Always",
    "Automaton",
    "Correction",
    "Deviation",
    "Diagnostic",
    "EnvHandler",
    "EnvRequest",
    "Formula",
    "MarkerIndex",
    "CorrectionStyle",
    "Mode",
    "Monitor",
    "MonitorConfig",
    "MonitorResult",
    "Next",
    "Or",
    "Segment",
    "Spec",
    "StateDef",
    "StateRef",
    "Until",
    "Violation",
    "bundled_text",
    "check_run",
    "check_spec",
    "common_prefix",
    "compile_formula",
    "load_bundled",
    "parse",
    "parse_formula",
    "render",
    "to_dot",
    "to_gbnf",
    "to_mermaid",
    "transcript_conforms",
    "validate_examples",
]
