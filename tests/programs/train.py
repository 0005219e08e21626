"""A plain training script, as a user writes one (tests/e2e/test_attach.py runs it
under `dlcprof run --`): argparse, a tiny model, an optimizer, a loop over two
sequence lengths, and a compiled helper with a data-dependent branch."""

import argparse
import sys

import torch


class Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x))


@torch.compile
def shift(x):
    y = x * 2
    if y.sum() > 0:  # data-dependent: Dynamo breaks the graph here
        return y - 1
    return y + 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--exit-code", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.manual_seed(0)
    model = torch.compile(Tiny().to(args.device))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for seq in (4, 6):
        for step in range(args.steps):
            loss = shift(model(torch.randn(seq, 8, device=args.device))).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            print(f"seq {seq} step {step} loss {loss.item():.4f}", flush=True)
    print("done")
    return args.exit_code


if __name__ == "__main__":
    sys.exit(main())
