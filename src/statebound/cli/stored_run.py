"""``statebound eval --out DIR --resume``: what the store holds fills what the command leaves out.

A run directory keeps its configuration, so resuming needs only ``--out``: the benchmark, agents,
models, seeds, tasks, limits and benchmark options come from the store, and what the command does
give is added (agents, models, seeds: only their episodes run) or checked against it (the rest).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from statebound.bench.models import ModelSpec
    from statebound.bench.plan import RunConfig
    from statebound.contract.benchmark import EpisodeLimits

__all__ = ["describe", "locate_stored_files", "stored_config", "stored_models"]


def stored_config(run_dir: Path) -> RunConfig | None:
    """The configuration stored in ``run_dir``, or ``None`` when it holds no run yet."""
    from statebound.bench.packed import has_store
    from statebound.bench.store import RunStore

    if not has_store(run_dir):
        return None
    with RunStore(run_dir, read_only=True) as store:
        return store.config()


def locate_stored_files(run_dir: Path) -> list[str]:
    """Load the stored run's user files (``path.py:name``) from where they are now, from any
    directory; the lines saying which files that is (none: no user file)."""
    from statebound.bench.run_files import locate_files
    from statebound.bench.store import RunStore

    with RunStore(run_dir, read_only=True) as store:
        files = store.files()
    return locate_files(files, run_dir)


def stored_models(stored: RunConfig, options: Mapping[str, Any]) -> list[ModelSpec]:
    """The stored models as they can be opened again, each with ``options`` (``--model-option``)
    over its own."""
    from statebound.bench.identity import as_stored_reachable
    from statebound.bench.models import ModelSpec

    models = [as_stored_reachable(model) for model in stored.models]
    return [ModelSpec(model.name, {**model.options, **options}) for model in models]


def limits_or_stored(stored: RunConfig | None, given: EpisodeLimits) -> EpisodeLimits:
    """``given``, or the stored limits when no limit is given."""
    unset = given.max_turns is None and given.max_tokens is None and given.timeout_s is None
    return stored.limits if stored is not None and unset else given


def describe(config: RunConfig, run_dir: Path, *, added: Sequence[str]) -> str:
    """The lines printed before a resumed run: what it runs, and what this command adds."""
    from statebound.bench.registry import benchmark_class, benchmark_names

    options = dict(config.benchmark_options)
    if config.benchmark in benchmark_names():  # only what differs from the benchmark's defaults
        defaults = benchmark_class(config.benchmark).Options().model_dump(mode="json")
        options = {key: value for key, value in options.items() if defaults.get(key) != value}
    limits = config.limits
    parts = [
        config.benchmark + "".join(f" -O {key}={value}" for key, value in options.items()),
        f"agents {', '.join(config.agents)}",
        f"models {', '.join(model.name for model in config.models)}",
        f"seeds {', '.join(map(str, config.seeds))}",
        f"{len(config.task_ids)} tasks",
        f"max_turns {limits.max_turns}"
        + (f", max_tokens {limits.max_tokens}" if limits.max_tokens is not None else "")
        + (f", timeout {limits.timeout_s:g}s" if limits.timeout_s is not None else ""),
    ]
    lines = [f"resuming {run_dir}: {'; '.join(parts)}"]
    if added:
        lines.append(f"adding to the run: {'; '.join(added)} (only their episodes run)")
    return "\n".join(lines)
