"""Hugging Face's GPT-2 classifier given ``inputs_embeds`` with a padding token set:
its forward calls ``logger.warning_once`` (transformers' lru_cache'd function set
on ``logging.Logger``) after the transformer, inside the compiled frame, and
Dynamo breaks the graph there, in transformers' file, not the program's.
A tiny model from a config (random weights, nothing downloaded), three calls."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from transformers import GPT2Config, GPT2ForSequenceClassification  # noqa: E402

config = GPT2Config(n_layer=1, n_head=2, n_embd=16, n_positions=16, vocab_size=64, pad_token_id=0)
torch.manual_seed(0)
model = GPT2ForSequenceClassification(config).eval()
compiled = torch.compile(model)
embeds = torch.randn(2, 8, 16)
with torch.no_grad():
    for _ in range(3):
        compiled(inputs_embeds=embeds)
print("done")
