"""The compiled automaton accepts exactly the formula's language.

Reference: the formula translated into a regular expression over one-character state codes,
matched with the ``regex`` module (whose ``partial=True`` answers "is this a prefix of a match").
"""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from statebound.spec import (
    Always,
    Formula,
    Next,
    Or,
    StateRef,
    Until,
    compile_formula,
    parse,
    render,
)

CODES = "abcd"


def to_regex(formula: Formula) -> str:
    match formula:
        case StateRef(name=name):
            return name
        case Next(parts=parts):
            return "".join(f"(?:{to_regex(p)})" for p in parts)
        case Or(parts=parts):
            return "(?:" + "|".join(to_regex(p) for p in parts) + ")"
        case Until(body=body, end=end, low=low, high=high):
            times = "*" if high is None else f"{{{low},{high}}}"
            return f"(?:{to_regex(body)}){times}(?:{to_regex(end)})"
        case Always(body=body):
            return f"(?:{to_regex(body)})*"
    raise TypeError(formula)


def _bounds(draw_low: int, span: int | None) -> tuple[int, int | None]:
    return (draw_low, None if span is None else draw_low + span)


atoms = st.sampled_from(CODES).map(StateRef)
formulas = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(lambda ps: Next(tuple(ps))),
        st.lists(inner, min_size=1, max_size=3).map(lambda ps: Or(tuple(ps))),
        st.builds(lambda b, e: Until(b, e), inner, inner),
        st.builds(lambda b, e, hi: Until(b, e, 0, hi), inner, inner, st.integers(0, 3)),
        st.builds(lambda b, e, lo, span: Until(b, e, lo, lo + span), inner, inner,
                  st.integers(0, 2), st.integers(0, 2)),
        inner.map(Always),
    ),
    max_leaves=8,
)
runs = st.lists(st.sampled_from(CODES), max_size=9)


@settings(max_examples=300, deadline=None)
@given(formulas, runs)
def test_accepts_matches_reference(formula: Formula, run: list[str]) -> None:
    automaton = compile_formula(formula, alphabet=tuple(CODES))
    reference = regex.fullmatch(to_regex(formula), "".join(run)) is not None
    assert automaton.accepts(run) == reference


@settings(max_examples=300, deadline=None)
@given(formulas, runs)
def test_allows_and_valid_next_match_reference(formula: Formula, run: list[str]) -> None:
    automaton = compile_formula(formula, alphabet=tuple(CODES))
    pattern = regex.compile(to_regex(formula))

    def is_prefix(word: str) -> bool:
        return pattern.fullmatch(word, partial=True) is not None

    word = "".join(run)
    assert automaton.allows(run) == is_prefix(word)
    expected = frozenset(c for c in CODES if is_prefix(word + c)) if is_prefix(word) else frozenset()
    assert automaton.valid_next(run) == expected


@settings(max_examples=100, deadline=None)
@given(formulas)
def test_words_from_the_language_are_accepted_and_every_prefix_allowed(formula: Formula) -> None:
    """Walk valid_next greedily from the start: every step stays allowed and the walk can finish."""
    automaton = compile_formula(formula, alphabet=tuple(CODES))
    run: list[str] = []
    # from any node a finishing path is shorter than the automaton has nodes, so the walk ends
    # within that many steps after the first 7 (the shortest word may be longer than 12 letters)
    for _ in range(7 + len(automaton.edges)):
        if automaton.accepts(run) and (not automaton.valid_next(run) or len(run) > 6):
            break
        node = automaton.walk(run)
        options = automaton.finishing_next(node) or automaton.valid_next(run)
        run.append(min(options))
        assert automaton.allows(run)
    assert automaton.accepts(run)
    assert regex.fullmatch(to_regex(formula), "".join(run))


@settings(max_examples=100, deadline=None)
@given(formulas)
def test_render_parse_round_trip(formula: Formula) -> None:
    assert parse_formula_text(render(formula)) == formula


def parse_formula_text(text: str) -> Formula:
    from statebound.spec import parse_formula

    return parse_formula(text, set(CODES))


def test_paper_react_language() -> None:
    spec = parse(
        '(define r (:states (Q (:text "[Q]")) (T (:text "[T]")) (A (:text "[A]")) '
        '(O (:text "[O]") (:flags :env-input)) (F (:text "[F]")) (N (:text "[N]"))) '
        "(:behavior (next Q (until (next T A O) F) N)))"
    )
    automaton = spec.compile()
    assert automaton.accepts(["Q", "F", "N"])
    assert automaton.accepts(["Q", "T", "A", "O", "T", "A", "O", "F", "N"])
    assert not automaton.accepts(["Q", "T", "A", "F", "N"])
    assert automaton.valid_next(["Q", "T", "A", "O"]) == {"T", "F"}
    assert automaton.valid_next(["Q", "T", "T"]) == frozenset()


def test_marker_helpers() -> None:
    from statebound.spec import MarkerIndex, common_prefix

    index = MarkerIndex({"[Action]": "Act", "[Action Input]": "Act-Inp", "[Thought]": "Tht"})
    assert common_prefix(["[Action]", "[Action Input]"]) == "[Action"
    assert common_prefix(["[Action]", "[Thought]"]) == "["
    assert index.split("pre [Action] a [Action Input] b") == ("pre ", [("Act", " a "), ("Act-Inp", " b")])
    assert index.dangling("text [Action In") == len("[Action In")
    assert index.dangling("text [Action]") == 0 and index.dangling("text [x") == 0


def test_the_walk_reaches_words_longer_than_twelve_states() -> None:
    """The formula hypothesis found: its shortest word is 13 states long (once cut off at 12)."""
    a = StateRef("a")
    three = Until(a, a, 2, 2)  # a{2} a
    formula = Until(Next((a, a, three)), three, 2, 2)  # (a a aaa){2} aaa
    test_words_from_the_language_are_accepted_and_every_prefix_allowed.hypothesis.inner_test(formula)
    assert compile_formula(formula, alphabet=tuple(CODES)).accepts(["a"] * 13)
