"""A run's user files (a benchmark or agents named ``path.py:name``), kept with the run when it is
made: where each file is, absolute and relative to the run directory, so that ``statebound eval
--resume`` finds it from any directory (and says which file it loads); and what readers need of a
user's benchmark (its report columns and breakdown order), so that they never run the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from statebound.bench.plan import RunConfig
from statebound.contract.columns import MetaColumn
from statebound.errors import DefinitionError
from statebound.user_files import file_of, is_file_ref, relocate

__all__ = ["Declared", "declared_of", "locate_files", "run_files"]


@dataclass(frozen=True, slots=True)
class Declared:
    """What a benchmark declares for reports (``report_columns``, ``breakdown_order``)."""

    report_columns: tuple[MetaColumn, ...] = ()
    breakdown_order: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"report_columns": [asdict(column) for column in self.report_columns],
                "breakdown_order": {key: list(values) for key, values in self.breakdown_order.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Declared:
        return cls(tuple(MetaColumn(**column) for column in data.get("report_columns", ())),
                   {key: tuple(values) for key, values in data.get("breakdown_order", {}).items()})


def declared_of(benchmark: str) -> Declared | None:
    """What the user's benchmark ``benchmark`` (``path.py:name``, loaded already) declares;
    ``None`` for a registered one (readers find it installed)."""
    from statebound.bench.registry import benchmark_class

    if not is_file_ref(benchmark):
        return None
    cls = benchmark_class(benchmark)
    return Declared(tuple(cls.report_columns), {key: tuple(values) for key, values in cls.breakdown_order.items()})


def run_files(config: RunConfig, run_dir: Path) -> dict[str, dict[str, str]]:
    """The path written in each ``path.py:name`` of ``config`` (benchmark and agents) -> where the
    file is: ``absolute``, and ``relative`` to ``run_dir``."""
    found: dict[str, dict[str, str]] = {}
    for ref in (config.benchmark, *config.agents):
        if is_file_ref(ref):
            written, path = ref.rpartition(":")[0], file_of(ref).resolve()
            found[written] = {"absolute": str(path), "relative": os.path.relpath(path, run_dir.absolute())}
    return found


def locate_files(files: Mapping[str, Mapping[str, str]], run_dir: Path) -> list[str]:
    """Load each of a stored run's files from where it is now (:func:`run_files`: at its absolute
    path, else beside the run as it was); one line per file saying which file will be loaded.
    A :class:`DefinitionError` names a file found in neither place."""
    said = []
    for written, where in files.items():
        candidates = [Path(where["absolute"]), run_dir.absolute() / where["relative"]]
        path = next((candidate for candidate in candidates if candidate.is_file()), None)
        if path is None:
            raise DefinitionError(f"the run in {run_dir} uses {written}, which is neither at {candidates[0]} nor at "
                                  f"{candidates[1]}: put it back, or resume from the directory it was made in")
        relocate(written, path.resolve())
        said.append(f"loading {written} from {path.resolve()} (this run's code)")
    return said
