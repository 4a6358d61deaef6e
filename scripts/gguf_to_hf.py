"""Convert a llama-architecture GGUF into the Hugging Face folder vLLM loads (float32 weights, the
tokenizer and its chat template): ``python gguf_to_hf.py GGUF OUT``, run in the vLLM environment
(transformers reads GGUF with the gguf package). Used by scripts/setup-servers.sh."""

import os
import sys

import torch
from safetensors.torch import save_file
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

gguf, out = sys.argv[1], sys.argv[2]
folder, name = os.path.dirname(gguf), os.path.basename(gguf)
tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
config = AutoConfig.from_pretrained(folder, gguf_file=name)
model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
os.makedirs(out, exist_ok=True)
# the output layer is tied to the embeddings: vLLM ties it again
weights = {k: v.contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"}
save_file(weights, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
config.architectures = ["LlamaForCausalLM"]
config.dtype = "float32"
config.save_pretrained(out)
model.generation_config.save_pretrained(out)
tokenizer.save_pretrained(out)
print("wrote", sorted(os.listdir(out)))
