"""The sample project's training script: ``--sizes 4,6`` trains on two batch
sizes (the second recompiles), ``--layers`` deepens the model (more compile
time), ``--no-branch`` drops the graph break, ``--exit-code`` fails."""

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Model  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="4")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--no-branch", action="store_true")
    p.add_argument("--exit-code", type=int, default=0)
    args = p.parse_args()
    torch.manual_seed(0)
    if torch.distributed.is_torchelastic_launched():
        torch.distributed.init_process_group("gloo")
        rank = torch.distributed.get_rank()
        # Rank 1 sees a second batch size: it alone recompiles.
        sizes = args.sizes if rank == 0 else args.sizes + ",6"
    else:
        sizes = args.sizes
    model = torch.compile(Model(layers=args.layers, branch=not args.no_branch))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for n in (int(s) for s in sizes.split(",")):
        loss = model(torch.randn(n, 8)).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        print(f"batch {n} loss {loss.item():.4f}", flush=True)
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    return args.exit_code


if __name__ == "__main__":
    sys.exit(main())
