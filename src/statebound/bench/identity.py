"""What makes two run configurations the same run, and what may change when a run is resumed.

A run's identity is what can change its results: the benchmark and its resolved options, the
agents and the seeds (each as a set: the order they were named in changes nothing), the models
by name with the options that change what they answer (as a set), the selected tasks and the
limits. How a model is reached (its transport options: base URL, keys, timeouts, attempts, HTTP
client, cache, threads; the rule is :func:`statebound.llm.model_options.option_kind`) is not
part of it: a moved port or a rotated key may be given to ``--resume``, and the store records
what each part of the run used. A run may also grow: agents, models or seeds added to the same
run (:func:`extended`) run only their own episodes into the same store.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from statebound.bench.models import ModelSpec
from statebound.bench.plan import RunConfig
from statebound.errors import DefinitionError
from statebound.llm.model_options import option_kind, result_options, transport_options

__all__ = ["ConfigMismatch", "additions", "as_stored_reachable", "extended", "identity", "identity_differences", "in_stored_order",
           "transport_changes"]


class ConfigMismatch(DefinitionError):
    """``--resume`` was asked with a configuration other than the stored one."""


def identity(config: RunConfig) -> dict[str, Any]:
    """The part of ``config`` that decides results, in a form two runs compare by (no secrets)."""
    data = config.to_json()
    del data["version"]
    data["agents"] = sorted(data["agents"])
    data["seeds"] = sorted(data["seeds"])
    models = [{"name": model.name, "options": result_options(model.options)} for model in config.models]
    data["models"] = sorted(models, key=lambda model: json.dumps(model, sort_keys=True, default=str))
    return data


def identity_differences(stored: RunConfig, given: RunConfig) -> list[str]:
    """One ``key: stored ..., given ...`` line per part of the identity that differs."""
    old, new = identity(stored), identity(given)
    return [f"{key}: stored {old.get(key)!r}, given {new.get(key)!r}" for key in new if old.get(key) != new.get(key)]


def transport_changes(stored: RunConfig, given: RunConfig) -> list[str]:
    """How each model is reached now compared with the stored run (secrets as fingerprints)."""
    before = {model.name: transport_options(model.options) for model in stored.models}
    changes = []
    for model in given.models:
        old, new = before.get(model.name, {}), transport_options(model.options)
        changes += [f"{model.name} {name}: {old.get(name, 'unset')} -> {new.get(name, 'unset')}"
                    for name in sorted(old.keys() | new.keys()) if old.get(name) != new.get(name)]
    return changes


def in_stored_order(given: RunConfig, stored: RunConfig) -> RunConfig:
    """``given`` with its agents, models and seeds in the stored run's order (same identity), so
    the episodes keep their places in the run."""
    rank = {name: index for index, name in enumerate(model.name for model in stored.models)}
    return replace(
        given,
        agents=tuple(sorted(given.agents, key=stored.agents.index)),
        models=tuple(sorted(given.models, key=lambda model: rank[model.name])),
        seeds=tuple(sorted(given.seeds, key=stored.seeds.index)),
    )


def extended(stored: RunConfig, given: RunConfig) -> RunConfig | None:
    """The stored run grown by the agents, models and seeds ``given`` adds (each list in the stored
    order, the new ones after), when the rest is the same run; ``None`` when it is not (other
    tasks, options or limits, or a stored model given other options that change its answers).
    A model named in both is reached as ``given`` says (its transport options may change)."""
    given_models = {model.name: model for model in given.models}
    stored_names = [model.name for model in stored.models]
    grown = replace(
        given,
        agents=_union(stored.agents, given.agents),
        seeds=_union(stored.seeds, given.seeds),
        models=(*(given_models.get(model.name) or as_stored_reachable(model) for model in stored.models),
                *(model for model in given.models if model.name not in stored_names)),
    )
    as_stored = replace(grown, agents=stored.agents, seeds=stored.seeds,
                        models=grown.models[: len(stored.models)])
    return grown if not identity_differences(stored, as_stored) else None


def additions(stored: RunConfig, grown: RunConfig) -> list[str]:
    """What ``grown`` adds to ``stored``: ``agents: react``, ``seeds: 1, 2``, ..."""
    stored_models = {model.name for model in stored.models}
    added = (("agents", [a for a in grown.agents if a not in stored.agents]),
             ("models", [m.name for m in grown.models if m.name not in stored_models]),
             ("seeds", [str(s) for s in grown.seeds if s not in stored.seeds]))
    return [f"{kind}: {', '.join(names)}" for kind, names in added if names]


def _union(first: tuple[Any, ...], second: tuple[Any, ...]) -> tuple[Any, ...]:
    return (*first, *(item for item in second if item not in first))


def as_stored_reachable(model: ModelSpec) -> ModelSpec:
    """A stored model as it can be opened again: the store keeps only its secrets' fingerprints,
    so they are left out (the key comes from the environment or the config file)."""
    return ModelSpec(model.name, {name: value for name, value in model.options.items()
                                  if option_kind(name, value) != "secret"})
