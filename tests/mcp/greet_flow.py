"""A flow the MCP server tests serve: it asks a person before it greets (a pause), from typed
variables (the tool's ``vars``)."""

from dataclasses import dataclass

from statebound import AskHuman, Flow, Instruction, State, always, contains


@dataclass(frozen=True)
class Greeting:
    name: str = "world"
    times: int = 1


flow = Flow(name="greet", initial="Ask", vars=Greeting, states=[
    State("Ask", outputs=[AskHuman(lambda ctx: f"Greet {ctx.vars.name} {ctx.vars.times} times?")],
          transitions=[(contains("yes", source="human", ignore_case=True), "Greet"), (always(), "Skip")]),
    State("Greet", outputs=[Instruction(lambda ctx: " ".join([f"Hello {ctx.vars.name}!"] * ctx.vars.times))],
          transitions=[(always(), "Done")]),
    State("Skip", final=True),
    State("Done", final=True)])
