"""``torch.compile(DDP(nn.Sequential(...)))``: on torch 2.13 Dynamo compiles
DDP's own frames and no graph of the model, so every step runs eager (the
fix dlcprof's hint names, ``DDP(torch.compile(model))``, compiles it). Run
under torchrun (gloo)."""

import gc
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main() -> int:
    dist.init_process_group("gloo")
    model = torch.compile(DDP(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU())))
    for _ in range(2):
        model(torch.randn(4, 8)).sum().backward()
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    print(f"rank {dist.get_rank()} unique_graphs {graphs}", flush=True)
    # DDP holds the process group, and Dynamo's frames hold DDP in a cycle: freed
    # only as Python exits, gloo's work then aborts the rank ("terminate called
    # without an active exception", torch 2.13-2.15, under load). Freed here.
    del model
    gc.collect()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
