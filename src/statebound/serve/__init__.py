"""``statebound serve``: checkpointed flows as a durable HTTP service that Agent Protocol clients
(LangGraph's ``langgraph-sdk``, the UIs built on it) drive: :func:`~statebound.serve.app.build_app`
over an :class:`~statebound.serve.runner.Executor`. See docs/serve.md."""
