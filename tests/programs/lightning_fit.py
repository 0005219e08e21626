"""A tiny real Lightning module fitted as Lightning documents it,
``trainer.fit(torch.compile(module))`` (tests/e2e/test_frameworks.py): its
``training_step`` calls ``self.log``, which Dynamo cannot trace on torch 2.12
and 2.13 (Lightning-AI/pytorch-lightning#21836), so the program dies at its
first step. CPU, random data, no logger or checkpoint files."""

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)
        )

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.log("loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


if __name__ == "__main__":
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 8), torch.randn(64, 1))
    trainer = L.Trainer(
        accelerator="cpu",
        max_steps=4,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(torch.compile(Regressor()), DataLoader(data, batch_size=16))
    print("fitted", flush=True)
