"""One function compiled three times, a ``torch._dynamo.reset()`` before
each: torch restarts its compile ids at 0/0 after a reset, so its log holds
compile 0/0 three times. On a new Inductor cache folder the three are a miss,
a hit (the same graph again) and a miss (a new shape): each its own compile
(scripts/record_trace_fixture.py records its log; tests/unit/test_trace_import.py
and tests/e2e/test_dynamo_reset.py read it)."""

import torch


def f(x):
    return x @ x


def main() -> None:
    for n in (2, 2, 3):
        torch._dynamo.reset()
        print(torch.compile(f)(torch.ones(n, n)).sum().item())


if __name__ == "__main__":
    main()
