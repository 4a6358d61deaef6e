"""Every ```python block of README.md and docs/*.md runs as written and prints what it claims.

Each block runs in a fresh namespace, inside its own temporary working directory. What a block
claims to print is written as comments (``...`` matches anything):

- an inline comment on a ``print(...)`` line: ``print(x)  # 0.0018``;
- comment lines right below a ``print(...)`` line: ``# End final ('Solve', 'End')``.

Each claim must equal one printed line (whitespace at the ends aside), in order. Blocks that need
the embedded model, the bubblewrap sandbox, the ALFWorld engine or a MariaDB server are marked
``integration``. Text that is not meant to run (signatures, formats) belongs in ```text fences.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
FENCE = re.compile(r"^```python\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)

# (what the code mentions, outside comments) -> the real resource it needs
_LOCAL_MODEL = re.compile(r"open_model\((?!\s*[\"'](?:scripted|function:|openai:))")
_SANDBOX = re.compile(r"\b(?:BashEnv|Sandbox)\(")
_ENGINE = re.compile(r"\bAlfworldEnv\(")
_MARIADB = re.compile(r"backend\s*=\s*[\"']mysql")
_MCP_SERVER = re.compile(r"mcp-server-filesystem")  # docs/mcp.md: the server set-up installs into .mcp/
_MCP_INSTALLED = ROOT / ".mcp" / "node" / "node_modules" / ".bin" / "mcp-server-filesystem"


@dataclass(frozen=True)
class Example:
    doc: Path
    line: int  # line of the opening fence
    code: str

    @property
    def label(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def _examples() -> list[Example]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            found.append(Example(doc, text.count("\n", 0, match.start()) + 1, match.group(1)))
    return found


def _comments(code: str) -> dict[int, tokenize.TokenInfo]:
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    return {tok.start[0]: tok for tok in tokens if tok.type == tokenize.COMMENT}


def _without_comments(code: str) -> str:
    lines = code.splitlines()
    for row, tok in _comments(code).items():
        lines[row - 1] = lines[row - 1][: tok.start[1]]
    return "\n".join(lines)


def claims(code: str) -> list[str]:
    """The printed lines a block's comments promise, in order."""
    comments = _comments(code)
    found: list[str] = []
    after_print = False
    for row, text in enumerate(code.splitlines(), start=1):
        comment = comments.get(row)
        if text.lstrip().startswith("print("):
            after_print = True
            if comment is not None:
                found.append(comment.string.lstrip("#").strip())
        elif after_print and comment is not None and not text[: comment.start[1]].strip():
            found.append(comment.string.lstrip("#").strip())
        else:
            after_print = False
    return found


def _claim_pattern(claim: str) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(part.strip()) for part in claim.split("...")))


def assert_printed(claimed: list[str], output: str, label: str) -> None:
    lines = [line.strip() for line in output.splitlines()]
    position = 0
    for claim in claimed:
        pattern = _claim_pattern(claim)
        hit = next((i for i in range(position, len(lines)) if pattern.fullmatch(lines[i])), None)
        assert hit is not None, (
            f"{label}: no printed line (from line {position + 1} on) reads {claim!r}; printed:\n{output}"
        )
        position = hit + 1


def _marks(example: Example) -> list[pytest.MarkDecorator]:
    code = _without_comments(example.code)
    if _SANDBOX.search(code):
        return [
            pytest.mark.integration,
            pytest.mark.skipif(
                shutil.which("bwrap") is None,
                reason="needs bubblewrap (apt-get install bubblewrap)",
            ),
        ]
    if _MCP_SERVER.search(code):
        return [
            pytest.mark.integration,
            pytest.mark.skipif(
                not _MCP_INSTALLED.exists() and shutil.which("mcp-server-filesystem") is None,
                reason="needs @modelcontextprotocol/server-filesystem: run bash scripts/setup_mcp.sh",
            ),
        ]
    if _LOCAL_MODEL.search(code) or _ENGINE.search(code) or _MARIADB.search(code):
        return [pytest.mark.integration]
    return []


EXAMPLES = _examples()


@pytest.mark.parametrize(
    "example", [pytest.param(e, id=e.label, marks=_marks(e)) for e in EXAMPLES]
)
def test_doc_example_runs_and_prints_its_claims(
    example: Example,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    # the user's config file and default model stay out
    monkeypatch.setenv("STATEBOUND_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.delenv("STATEBOUND_MODEL", raising=False)
    if "OPENAI_API_KEY" not in os.environ:
        # models.md opens OpenAI clients "with the key from OPENAI_API_KEY"; nothing is sent.
        monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-example")
    exec(compile(example.code, example.label, "exec", dont_inherit=True),  # noqa: S102 - as `python file.py`
         {"__name__": "__main__"})
    assert_printed(claims(example.code), capsys.readouterr().out, example.label)


def test_every_runnable_fence_is_collected() -> None:
    """Python written under another fence name would escape these tests."""
    assert len(EXAMPLES) >= 20
    assert {e.doc.name for e in EXAMPLES} >= {
        "README.md",
        "flow.md",
        "specs.md",
        "models.md",
        "harness.md",
    }
    for doc in DOCS:
        stray = re.findall(
            r"^```(py|python3|pycon|ipython)\s*$", doc.read_text(encoding="utf-8"), flags=re.M
        )
        assert not stray, (
            f"{doc.name}: use ```python for runnable code or ```text for the rest, not {stray}"
        )


def test_claims_are_read_from_inline_and_following_comments() -> None:
    code = "x = 1  # not a claim\nprint(x)  # 1\n# and this\n\n# not this\nif x:\n    print(2)  # 2\ny = 3  # nor this\n"
    assert claims(code) == ["1", "and this", "2"]
    assert_printed(["a ... c", "... d"], "a b c\nx d\n", "t")
    with pytest.raises(AssertionError, match="reads 'b'"):
        assert_printed(["d", "b"], "b\nd\n", "t")
