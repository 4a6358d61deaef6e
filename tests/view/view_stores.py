"""What the viewer tests plant in stores: text holding HTML, in every place a page shows text."""

from __future__ import annotations

from statebound.contract.result import EpisodeResult

HOSTILE = "<script>alert('x')</script>"


def hostile_result(task: str, agent: str, *, success: bool) -> EpisodeResult:
    choice = {"name": "pick", "method": "score", "candidates": [HOSTILE, "plain"], "scores": [-0.5, -1.5], "picked": 0}
    trajectory = [
        {"state": "Ask", "role": "user", "source": "task", "content": f"task text {HOSTILE}"},
        {"state": "Ask", "role": "assistant", "source": "llm", "content": f"reply {HOSTILE}", "choice": choice,
         "prompt_tokens": 12, "completion_tokens": 3},
        {"state": "Act", "role": "tool", "source": "tool", "content": f"Observation: {HOSTILE}", "ok": True,
         "action": f"execute[{HOSTILE}]"},
    ]
    return EpisodeResult(task=task, agent=agent, model="m", success=success, reward=float(success), turns=1,
                         trajectory=trajectory, meta={"answer": f"answer {HOSTILE}"})
