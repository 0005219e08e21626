"""A tiny real Lightning module fitted for 3 epochs on 70 examples in batches
of 16: each epoch ends in a partial batch of 6, which recompiles the compiled
forward (and its backward) on the batch's size. ``--mark-dynamic`` marks the
batch's dim 0 dynamic before each step (dlcprof's mark_dynamic advice,
applied). CPU, random data, no logger or checkpoint files."""

import sys

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

MARK_DYNAMIC = "--mark-dynamic" in sys.argv


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)
        )

    def forward(self, x):
        return self.net(x)

    def on_train_batch_start(self, batch, batch_idx):
        if MARK_DYNAMIC:
            torch._dynamo.mark_dynamic(batch[0], 0)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


if __name__ == "__main__":
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(70, 8), torch.randn(70, 1))
    trainer = L.Trainer(
        accelerator="cpu",
        max_epochs=3,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(torch.compile(Regressor()), DataLoader(data, batch_size=16))
    print("fitted", flush=True)
