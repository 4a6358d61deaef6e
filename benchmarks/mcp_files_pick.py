"""Print how often the embedded model picks the line that answers a question among the lines the
real filesystem MCP server read (docs/mcp.md's example), with and without the pick's baseline.

    .venv/bin/python benchmarks/mcp_files_pick.py [--model smollm2]

The three sample files of docs/mcp.md are written into a temporary folder, read once through the
server's ``read_multiple_files`` (the server set-up installs into .mcp/), and each of six
questions is answered by ``Pick(method="score")`` over their lines: the prompt is
``Question: Q\\nAnswer:``, the baseline the same with ``N/A`` for the question.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from statebound import CallTool, Flow, Message, Pick, State, always, open_model
from statebound.mcp import MCPServer, mcp_tool

ROOT = Path(__file__).resolve().parents[1]
FILES = {"opening-hours.txt": "The library opens at 9 and closes at 17, Monday to Friday.",
         "price-list.txt": "Tea costs 2 euros; coffee costs 3 euros.",
         "staff.txt": "Ann runs the front desk; Bo looks after the archive."}
QUESTIONS = {"When does the library open?": "opening-hours.txt", "How much is a cup of tea?": "price-list.txt",
             "Who runs the front desk?": "staff.txt", "Is the library open on Sunday?": "opening-hours.txt",
             "What does coffee cost?": "price-list.txt", "Who looks after the archive?": "staff.txt"}


def lines(ctx) -> list[str]:
    return [line for line in ctx.last_of("tool").content.splitlines()
            if line.strip() and not line.endswith(":") and line != "---"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    options = parser.parse_args()
    command = shutil.which("mcp-server-filesystem") or str(ROOT / ".mcp/node/node_modules/.bin/mcp-server-filesystem")
    llm = open_model(options.model)
    with tempfile.TemporaryDirectory() as folder:
        for name, text in FILES.items():
            (Path(folder) / name).write_text(text + "\n")
        files = MCPServer.stdio("files", command, folder)
        read = CallTool(mcp_tool(files, "read_multiple_files"), args={"paths": [str(Path(folder) / n) for n in FILES]})
        for calibrated in (False, True):
            baseline = (lambda ctx: [Message("user", "Question: N/A\nAnswer:")]) if calibrated else None
            pick = Pick(lines, prompt=lambda ctx: [Message("user", f"Question: {ctx.task}\nAnswer:")],
                        baseline=baseline, name="answer")
            flow = Flow(name="files", initial="Read", states=[
                State("Read", outputs=[read], transitions=[(always(), "Answer")]),
                State("Answer", outputs=[pick], transitions=[(always(), "End")]), State("End", final=True)])
            right = sum(flow.run_sync(question, llm=llm).history[-1].content == FILES[gold]
                        for question, gold in QUESTIONS.items())
            print(f"{options.model}, pick {'with' if calibrated else 'without'} its baseline: "
                  f"{right} of {len(QUESTIONS)} questions answered by the right line")


if __name__ == "__main__":
    main()
