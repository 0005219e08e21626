"""A BERT training step (forward, loss, backward, AdamW step) from Hugging Face transformers.

dlcprof runs every workload under ``torch.no_grad()`` (it measures inference
unless told otherwise); a training step turns grad on itself with
``torch.enable_grad()``. Under ``torch.compile`` Dynamo breaks the graph at
``loss.backward()``: the forward and loss compile as one graph (AOTAutograd
also builds its backward, which Inductor compiles lazily at the first
``.backward()``), and the optimizer step compiles as another.

    dlcprof run examples/bert_train.py
    dlcprof run examples/bert_train.py --cache cold    # the compile time a new machine pays
"""

import torch
from transformers import BertConfig, BertForSequenceClassification

BATCH, CLASSES = 8, 2
SIZES = [32, 64, 128]  # sequence lengths
SMALL_SIZES = [8, 16]
TOKENS = 512  # token ids are drawn below every config's vocabulary size


def config(size):
    if size == "small":
        return BertConfig(
            num_hidden_layers=2,
            hidden_size=64,
            num_attention_heads=4,
            intermediate_size=128,
            vocab_size=512,
            max_position_embeddings=64,
            num_labels=CLASSES,
        )
    return BertConfig(num_labels=CLASSES)  # BERT base: 12 layers, 768 wide, 110M parameters


def inputs_for(n, device, dtype):
    torch.manual_seed(n)
    input_ids = torch.randint(0, TOKENS, (BATCH, n), device=device)
    labels = torch.randint(0, CLASSES, (BATCH,), device=device)
    return input_ids, labels


def build(device, dtype, size="default"):
    torch.manual_seed(0)
    model = BertForSequenceClassification(config(size)).to(device=device, dtype=dtype).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(input_ids, labels):
        with torch.enable_grad():
            loss = model(input_ids, labels=labels).loss
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()

    return step, inputs_for(16 if size == "small" else 128, device, dtype)
