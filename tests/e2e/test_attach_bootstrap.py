"""The bootstrap (dlcprof/worker/attached/bootstrap/sitecustomize.py) waits for
torch to be loaded, then for Dynamo, whatever the program does first: real
Pythons importing the real torch, the probes' install stood in by a probe
module that says it ran (what it installs is tests/e2e/test_attach.py's)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dlcprof.attach_contract import BOOTSTRAP_DIR, ROOT_ENV, SOCKET_ENV

LAZY_FINDER = """
import importlib.machinery, sys

class Own:  # a program's finder ahead of all others: torch's loader is its own
    def find_spec(self, name, path, target=None):
        if name == "torch":
            return importlib.machinery.PathFinder.find_spec(name, path)
        return None

sys.meta_path.insert(0, Own())
import torch
"""

LAZY_LOADER = """
import importlib.util, sys

spec = importlib.util.find_spec("torch")
spec.loader = importlib.util.LazyLoader(spec.loader)
torch = importlib.util.module_from_spec(spec)
sys.modules["torch"] = torch
spec.loader.exec_module(torch)
torch.ones(1)  # the lazy module loads here
"""

BEFORE = {
    "find_spec": "import importlib.util\nimportlib.util.find_spec('torch')\nimport torch",
    "import_module": "import importlib\nimportlib.import_module('torch')",
    "own finder": LAZY_FINDER,
    "lazy loader": LAZY_LOADER,
}


@pytest.fixture(scope="module")
def probe_root(tmp_path_factory):
    """A stand-in dlcprof whose ``probe.install`` only says so."""
    root = tmp_path_factory.mktemp("root")
    attached = root / "dlcprof" / "worker" / "attached"
    attached.mkdir(parents=True)
    for folder in (root / "dlcprof", root / "dlcprof" / "worker", attached):
        (folder / "__init__.py").write_text("")
    (attached / "probe.py").write_text(
        "import sys\n\ndef install(torch):\n"
        "    print('installed', sorted(m for m in sys.modules if m == 'torch._dynamo'))\n"
    )
    return root


@pytest.mark.parametrize("before", list(BEFORE))
def test_probes_install_once_torch_has_loaded_and_dynamo_with_it(probe_root, before):
    program = f"import sys\n{BEFORE[before]}\nprint('torch loaded')\nimport torch._dynamo\n"
    program += "print('end', [f for f in sys.meta_path if type(f).__name__ == '_WaitFor'])\n"
    env = {
        **os.environ,
        "PYTHONPATH": str(BOOTSTRAP_DIR),
        SOCKET_ENV: "unused",
        ROOT_ENV: str(probe_root),
    }
    proc = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    # Once, after torch, with Dynamo imported; and the bootstrap's finders gone.
    assert proc.stdout.splitlines() == ["torch loaded", "installed ['torch._dynamo']", "end []"]
