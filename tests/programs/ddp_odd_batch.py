"""A 2-rank DDP job on gloo whose ranks hold shards of different lengths: rank 1's
shard has one sample fewer, so its last batch is partial and it alone recompiles
on the batch size while rank 0 waits for it in DDP's all-reduce
(tests/e2e/test_job_advice.py runs it under `dlcprof run -- torchrun`)."""

import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset

WIDTH, BATCH = 8, 4


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        return torch.nn.functional.gelu(self.linear(x))


def main() -> int:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(rank)
    shard = TensorDataset(torch.randn(2 * BATCH - rank, WIDTH))
    loader = DataLoader(shard, batch_size=BATCH)
    model = DDP(Net())
    step = torch.compile(model, dynamic=False)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for (x,) in loader:
        step(x).pow(2).mean().backward()
        opt.step()
        opt.zero_grad()
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
