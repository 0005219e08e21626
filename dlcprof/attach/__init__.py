"""Attaching to the user's own program: ``dlcprof [run] -- CMD ARGS…``.

Three parts, each in its own module:

- ``bootstrap/sitecustomize.py``: put on the program's ``PYTHONPATH``, it runs
  in every Python process of the program's tree, waits for ``import torch``
  to finish, then calls ``probe.install`` (never imports torch itself).
- ``probe.py`` (in the program): the worker's probes, fed to ``channel.py``;
  ``graph_calls.py`` times each compiled graph's calls and ``kernel_sample.py``
  times the kernels of a few of them.
- ``channel.py``: one AF_UNIX stream per process, non-blocking, bounded;
  ``program.py`` (dlcprof's side) spawns the command, accepts the streams,
  decodes events (data only: nothing received is executed) and forwards stop
  signals to the program.

The environment carries what the program's processes need (names below).
"""

from __future__ import annotations

from pathlib import Path

# The socket each process connects to (AF_UNIX path: survives torchrun, which
# closes inherited file descriptors).
SOCKET_ENV = "DLCPROF_ATTACH_SOCKET"
# The folder that holds the dlcprof package, so the bootstrap imports exactly
# this dlcprof without putting a site-packages folder on the program's path.
ROOT_ENV = "DLCPROF_ATTACH_ROOT"
# Set by --eager-baseline: the bootstrap makes torch.compile run eager.
EAGER_ENV = "DLCPROF_ATTACH_EAGER"

# Kernel times (kernel_sample.py): each compiled graph's calls after the first
# SAMPLE_AFTER_CALLS run with their launches timed, SAMPLED_CALLS of them.
SAMPLE_AFTER_CALLS = 1
SAMPLED_CALLS = 3
SAMPLED_WHICH = f"calls {SAMPLE_AFTER_CALLS + 1}-{SAMPLE_AFTER_CALLS + SAMPLED_CALLS} of each graph"
NOT_SAMPLED_YET = f"not sampled yet ({SAMPLED_WHICH} are)"

BOOTSTRAP_DIR = Path(__file__).resolve().parent / "bootstrap"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent.parent
