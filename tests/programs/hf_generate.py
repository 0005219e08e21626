"""A Hugging Face causal LM's ``generate()`` on prompts of several lengths, its
forward compiled: each call runs the prompt, then one token at a time over a KV
cache that grows, so the compiled forward recompiles on the cache's length and
on the prompt's (tests/unit/test_generate_advice.py). ``--static-cache``: a
static KV cache, one length for every call; ``--backend B``: torch.compile's
(aot_eager: no kernels to build). Random weights: nothing is downloaded."""

import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM

PROMPTS = (5, 9, 13, 17, 21)
STATIC = {"cache_implementation": "static", "max_cache_len": 32}

if __name__ == "__main__":
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=128,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
    )
    model = LlamaForCausalLM(config).eval()
    backend = sys.argv[sys.argv.index("--backend") + 1] if "--backend" in sys.argv else "aot_eager"
    model.forward = torch.compile(model.forward, backend=backend)
    cache = STATIC if "--static-cache" in sys.argv else {}
    with torch.no_grad():
        for n in PROMPTS:
            prompt = torch.randint(0, 128, (1, n))
            model.generate(prompt, max_new_tokens=8, do_sample=False, **cache)  # the user's call
    print("generated", flush=True)
