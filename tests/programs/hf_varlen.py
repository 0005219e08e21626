"""A Hugging Face ``Trainer`` with ``torch_compile=True`` on a tiny GPT-2 whose
batches change length: the collator pads each batch to its longest example, so
the compiled model recompiles on ``input_ids``' dim 1
(tests/e2e/test_recompile_at_call.py). Random weights: nothing is downloaded."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

LENGTHS = [8, 8, 12, 12, 16, 16, 20, 20]


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return len(LENGTHS)

    def __getitem__(self, i):
        ids = torch.arange(LENGTHS[i]) % 128
        return {"input_ids": ids, "labels": ids}


def collate(examples):
    longest = max(len(e["input_ids"]) for e in examples)
    ids = torch.stack(
        [
            torch.nn.functional.pad(e["input_ids"], (0, longest - len(e["input_ids"])))
            for e in examples
        ]
    )
    return {"input_ids": ids, "labels": ids}


if __name__ == "__main__":
    torch.manual_seed(0)
    config = GPT2Config(n_layer=1, n_embd=32, n_head=2, n_positions=64, vocab_size=128)
    args = TrainingArguments(
        output_dir="hf_varlen_out",
        per_device_train_batch_size=2,
        num_train_epochs=1,
        torch_compile=True,
        torch_compile_backend="aot_eager",
        use_cpu=True,
        report_to=[],
        save_strategy="no",
        logging_strategy="no",
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    trainer = Trainer(
        model=GPT2LMHeadModel(config), args=args, train_dataset=Tokens(), data_collator=collate
    )
    trainer.train()
    print("trained", flush=True)
