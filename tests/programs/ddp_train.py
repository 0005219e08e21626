"""A DDP training script on gloo, as a user runs one under torchrun (the
many-ranks tests run it under `dlcprof run -- torchrun --nproc-per-node 2`).

Options cause what the tests look for, on one rank only where they name one:
``--diverge-rank R`` (rank R alone changes its batch shape at step 2: it alone
recompiles), ``--crash-rank R`` (rank R raises at step 1), ``--eager-rank R``
(rank R never compiles), ``--width 512 --bucket-cap-mb 1`` (several DDP
buckets: DDPOptimizer splits the graph). ``--device cuda --backend nccl``: one
GPU per rank (scripts/gpu_ranks_check.sh)."""

import argparse
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Blocks(torch.nn.Module):
    def __init__(self, width: int, depth: int) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = torch.nn.functional.gelu(layer(x))
        return x


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--depth", type=int, default=2)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--bucket-cap-mb", type=float, default=25.0)
    parser.add_argument("--diverge-rank", type=int, default=-1)
    parser.add_argument("--crash-rank", type=int, default=-1)
    parser.add_argument("--eager-rank", type=int, default=-1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--backend", default="gloo")
    args = parser.parse_args()
    dist.init_process_group(args.backend)
    rank = dist.get_rank()
    torch.manual_seed(0)
    device = (
        torch.device(args.device, int(os.environ["LOCAL_RANK"])) if args.device == "cuda" else None
    )
    blocks = Blocks(args.width, args.depth).to(device)
    ids = [device] if device is not None else None
    model = DDP(blocks, device_ids=ids, bucket_cap_mb=args.bucket_cap_mb)
    step_fn = model if rank == args.eager_rank else torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(args.steps):
        if rank == args.crash_rank and step == 1:
            raise RuntimeError(f"rank {rank} crashed at step {step} (--crash-rank)")
        batch = args.batch + (2 if rank == args.diverge_rank and step >= 2 else 0)
        loss = step_fn(torch.randn(batch, args.width, device=device)).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        print(f"rank {rank} step {step} batch {batch} loss {loss.item():.4f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print(f"rank {rank} done (pid {os.getpid()})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
