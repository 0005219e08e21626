"""A training loop that runs its compiled model for a few seconds after the
compile (tests/unit/test_attached_hotspots.py records it under `dlcprof run --`):
the sampled stacks then hold the compiled code running, the eager optimizer
and dlcprof's kernel sampler beside the compiler's own frames."""

import torch


def main() -> None:
    torch.manual_seed(0)
    model = torch.compile(
        torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.Linear(256, 256))
    )
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(512, 256)
    for _ in range(400):
        model(x).pow(2).mean().backward()
        opt.step()
        opt.zero_grad()
    print("done")


if __name__ == "__main__":
    main()
