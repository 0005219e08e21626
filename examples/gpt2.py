"""GPT-2 (Hugging Face transformers) over several sequence lengths: the dynamic-shapes case.

Built from a config with random weights, so it runs without a network. To
profile a trained model instead, replace the config line with
``GPT2LMHeadModel.from_pretrained("gpt2")``.

    dlcprof run examples/gpt2.py                                   # one compile + benchmark
    dlcprof run examples/gpt2.py --sweep --dynamic false           # every length recompiles
    dlcprof run examples/gpt2.py --sweep --dynamic true            # one symbolic length
"""

import torch
from transformers import GPT2Config, GPT2LMHeadModel

BATCH = 4
SIZES = [32, 48, 64, 96, 128, 192, 256]  # sequence lengths
SMALL_SIZES = [8, 12, 16]
TOKENS = 512  # token ids are drawn below every config's vocabulary size


def config(size):
    if size == "small":  # two narrow layers: seconds to compile, for tests
        return GPT2Config(
            n_layer=2,
            n_embd=64,
            n_head=4,
            vocab_size=512,
            n_positions=64,
            bos_token_id=0,
            eos_token_id=0,
            use_cache=False,
        )
    return GPT2Config(use_cache=False)  # GPT-2 small: 12 layers, 768 wide, 124M parameters


def inputs_for(n, device, dtype):
    """A batch of token ids of sequence length n (dtype is the model's, not the ids')."""
    torch.manual_seed(n)
    return (torch.randint(0, TOKENS, (BATCH, n), device=device),)


def build(device, dtype, size="default"):
    torch.manual_seed(0)
    model = GPT2LMHeadModel(config(size)).to(device=device, dtype=dtype).eval()

    def forward(input_ids):
        return model(input_ids).logits

    return forward, inputs_for(16 if size == "small" else 128, device, dtype)
