"""Machines learnt from solved runs (docs/induce.md).

Any run store can teach: the harness keeps, beside every action an agent sent, the candidates the
environment offered (:class:`~statebound.contract.trace.Step`). :func:`induce` reads the solved
episodes of run directories and returns an ordinary :class:`~statebound.flow.Flow`: per task type,
a state per role an action played, the model picking among the offered actions that fit the roles
that come next (:mod:`statebound.induce.flow`). :func:`induce_machine` returns the
:class:`Machine` itself, which :func:`write_machine` writes as Python or JSON a person can edit and
``statebound eval BENCH -a induced:PATH`` runs; ``statebound induce --folds 2`` learns on part of
the tasks and evaluates on the rest, each way (:mod:`statebound.induce.folds`).
"""

from __future__ import annotations

from statebound.induce.files import load_machine, write_machine
from statebound.induce.machine import Graph, Machine, Role, Trained, check_machine
from statebound.induce.teach import induce, induce_machine

__all__ = ["Graph", "Machine", "Role", "Trained", "check_machine", "induce", "induce_machine", "load_machine",
           "write_machine"]
