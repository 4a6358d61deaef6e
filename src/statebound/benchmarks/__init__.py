"""The bundled benchmarks, each a declaration the harness runs (:mod:`statebound.contract.benchmark`):
``toy``, ``intercode-sql``, ``intercode-bash``, ``gsm8k``, ``hotpotqa``, ``alfworld``. They are
registered by entry point in ``pyproject.toml``, as a third-party benchmark would be."""
