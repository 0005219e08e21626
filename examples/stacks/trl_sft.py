"""TRL's SFTTrainer with ``torch_compile=True`` on a tiny Llama built from a
config (random weights) and a word-level tokenizer made here: nothing is
downloaded. The texts differ in length, so each batch is padded to its own
longest: the sequence length changes between steps, as in real SFT.

    HF_HUB_OFFLINE=1 dlcprof run -- python examples/stacks/trl_sft.py
"""

import os
import sys
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from datasets import Dataset  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast  # noqa: E402
from trl import SFTConfig, SFTTrainer  # noqa: E402

WORDS = "the a model learns to compile graphs and kernels fast slow on cpu with torch".split()


def tokenizer() -> PreTrainedTokenizerFast:
    specials = ["<unk>", "<pad>", "<s>", "</s>"]
    vocab = {w: i for i, w in enumerate(specials + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>",
        eos_token="</s>",
    )  # fmt: skip


def texts(n: int) -> list[str]:
    # Lengths 3..10 words: batches of different longest lengths.
    return [" ".join(WORDS[(i + j) % len(WORDS)] for j in range(3 + (i * 5) % 8)) for i in range(n)]


def main() -> None:
    tok = tokenizer()
    config = LlamaConfig(
        vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
        pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
    )  # fmt: skip
    model = LlamaForCausalLM(config)
    args = SFTConfig(
        output_dir=tempfile.mkdtemp(prefix="trl-sft-"),
        max_steps=int(sys.argv[1]) if len(sys.argv) > 1 else 4,
        per_device_train_batch_size=2,
        torch_compile=True,
        use_cpu=True,
        report_to="none",
        logging_steps=1,
        save_strategy="no",
        max_length=32,
        dataloader_num_workers=0,
    )
    trainer = SFTTrainer(
        model=model, args=args, train_dataset=Dataset.from_dict({"text": texts(16)}),
        processing_class=tok,
    )  # fmt: skip
    trainer.train()


if __name__ == "__main__":
    main()
