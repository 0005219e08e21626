"""A tiny module exported and compiled ahead of time by AOTInductor
(``aoti_compile_and_package``), on CPU: its log holds the generated C++
(scripts/record_trace_fixture.py records it; tests/unit/test_tlparse_corpus.py
reads it beside tlparse's AOTInductor inputs)."""

import sys
import tempfile
from pathlib import Path

import torch


class Linear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x)) * 2


def main() -> None:
    exported = torch.export.export(Linear(), (torch.randn(4, 8),))
    with tempfile.TemporaryDirectory() as out:
        torch._inductor.aoti_compile_and_package(exported, package_path=str(Path(out) / "m.pt2"))
    print("compiled", file=sys.stderr)


if __name__ == "__main__":
    main()
