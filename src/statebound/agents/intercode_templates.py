"""Upstream InterCode's prompt templates (``experiments/utils/prompts.py``: ``TemplateReAct`` and
``TemplatePlanSolve``), verbatim, for a setting (``MySQL Database``, ``Bourne Shell``) and a
language (``SQL``, ``BASH``); the SQL and Bash agents fill them with their own demonstrations."""

from __future__ import annotations

__all__ = ["plan_execute", "plan_intro", "react_intro"]


def react_intro(setting: str, language: str) -> str:
    """``TemplateReAct.get_init_msg`` (its trailing space after ``two types:`` included)."""
    return f"""Interact with a {setting} system using {language} queries to answer a question.
Use interleaving Thought, Action, Observation steps.
Thought can reason about the current situation, and Action can be two types: 
(1) execute, which executes {language} code on the {setting} system
(2) submit, which indicates that the previous observation is the answer
Here are some examples.
"""


def plan_intro(language: str, demos: str) -> str:
    """``TemplatePlanSolve.get_init_msg`` with the plan demonstrations ``demos``."""
    return f"""For the following user question, let's first understand the problem and devise a plan
to solve the problem. Then, let's carry out the plan to solve the problem step by step.

Your plan should describe a sequence of {language} queries you can write to
determine the answer. Here are three examples of coming up with a plan for a question.

{demos}
"""


def plan_execute(setting: str, language: str) -> str:
    """``TemplatePlanSolve.get_execute_plan_msg``."""
    return f"""You will now execute your own plan. Interact with a {setting} system using
{language} queries to answer a question. Per turn, you will be given the following information:

```
Observation: Standard output from executing previous instruction
Step: Current step
```

Your response should be {language} code, nothing else, formatted as follows:
```{language}
Your {language} code here
```
"""
