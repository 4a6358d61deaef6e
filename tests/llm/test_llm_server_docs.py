"""docs/flow.md's structured-output and tool-calling examples, run as written against the real
llama-cpp-python server instead of the embedded model (tests/test_docs_examples.py runs them on
the embedded one): only the line opening the model changes, to the server's base_url alone (its
profile, detected, says how schemas and tools are sent)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from statebound.llm.model_files import llama_cpp_missing

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(llama_cpp_missing() is not None, reason="llama-cpp-python is not installed"),
]
FLOW_DOC = Path(__file__).resolve().parents[2] / "docs" / "flow.md"
EMBEDDED = 'llm = open_model("smollm2")'


def _example(heading: str) -> str:
    section = FLOW_DOC.read_text(encoding="utf-8").split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"^```python\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)
    assert match is not None, f"no python example under {heading!r}"
    return match.group(1)


@pytest.mark.parametrize("heading", ["Structured output", "Tool calls by the model"])
def test_the_docs_example_runs_against_the_server(heading: str, llama_server: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code = _example(heading)
    assert EMBEDDED in code
    served = f'llm = open_model("openai:local", base_url={llama_server!r})'  # the profile does the rest
    exec(compile(code.replace(EMBEDDED, served), f"{heading} (server)", "exec", dont_inherit=True),  # noqa: S102
         {"__name__": "__main__"})
    claimed = code.rstrip().splitlines()[-1].removeprefix("# ").strip()
    assert capsys.readouterr().out.strip().splitlines()[-1] == claimed
