"""The options ``statebound eval alfworld -O key=value`` takes (the benchmark's, read by its agents):
StateAct's put correction, the prompts' legacy put, the reply format, the scoped agent's chooser
and ALFChat's speaker selection."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from statebound.contract.benchmark import ChoiceOptions, FormatOptions
from statebound.flow.choosers import ChoiceMethod

__all__ = ["AlfworldOptions"]


class AlfworldOptions(FormatOptions, ChoiceOptions):
    correct_put: bool = Field(False, description="StateAct's put correction")
    # the scoped record was made with a choice grammar: grammar stays the default here
    choice: ChoiceMethod = Field("grammar", description="how stateflow-scoped chooses among its commands: "
                                 "grammar (the record's), auto, score, label, or random (the control)")
    speaker: Literal["rules", "text", "auto", "score", "label", "grammar"] = Field(
        "rules", description="alfchat-3agents: who speaks after the executor: rules (AutoGen's runner), or the "
        "model by auto selection: text (AutoGen's free answer) or a chooser")
    legacy_put: bool = Field(True, description="accept and speak the prompts' 'put X in/on Y'")
