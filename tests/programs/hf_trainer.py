"""A Hugging Face ``Trainer`` with ``torch_compile=True`` on a tiny GPT-2
(1 layer, hidden 32, random weights: nothing is downloaded)
(tests/e2e/test_frameworks.py). 10 examples in batches of 4: the last batch
of 2 is a new shape, so the compiled model recompiles once for it."""

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n, length, vocab):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, length), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


if __name__ == "__main__":
    torch.manual_seed(0)
    config = GPT2Config(n_layer=1, n_embd=32, n_head=2, n_positions=64, vocab_size=128)
    args = TrainingArguments(
        output_dir="hf_trainer_out",
        per_device_train_batch_size=4,
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
    trainer = Trainer(model=GPT2LMHeadModel(config), args=args, train_dataset=Tokens(10, 16, 128))
    trainer.train()
    print("trained", flush=True)
