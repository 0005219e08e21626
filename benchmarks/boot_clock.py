"""A small training loop that keeps its own clock, for the boot split of
benchmarks/RESULTS.md §20: `dlcprof run -- python benchmarks/boot_clock.py`
cold (a new TORCHINDUCTOR_CACHE_DIR) then warm. It prints, from its first
line (after the interpreter started), when `import torch` returned, when its
first compiled step ended and when its third did (forward and backward
compiled, one C++ kernel each at least)."""

import time

T0 = time.time()

import torch  # noqa: E402

IMPORTED = time.time()


def main() -> None:
    torch.manual_seed(0)
    model = torch.compile(torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.GELU()))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(8, 32)
    marks = []  # the first step's forward, backward and optimizer step ends
    ends = []
    for _ in range(3):
        loss = model(x).pow(2).mean()
        marks.append(time.time())
        loss.backward()
        marks.append(time.time())
        opt.step()
        opt.zero_grad()
        ends.append(time.time())
    fwd, bwd = marks[0] - T0, marks[1] - T0
    print(
        f"own clock: import torch {IMPORTED - T0:.2f} s, first forward ends at {fwd:.2f} s, "
        f"its backward at {bwd:.2f} s, the first step at {ends[0] - T0:.2f} s, "
        f"the third at {ends[2] - T0:.2f} s"
    )


if __name__ == "__main__":
    main()
