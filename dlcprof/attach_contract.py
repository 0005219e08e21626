"""What dlcprof and an attached program's processes agree on (stdlib only).

Two sides of one process boundary: dlcprof's own (``attach/program.py``)
spawns the program with these in its environment; the program's side
(``worker/attached/``) reads them and samples kernel times by this policy,
which ``figures/`` words. ``bootstrap/sitecustomize.py`` imports nothing of
dlcprof before it has found it, so it spells ``SOCKET_ENV`` and ``ROOT_ENV``
out (tests/e2e/test_attach.py checks they agree).
"""

from __future__ import annotations

from pathlib import Path

# The socket each process connects to (AF_UNIX path: survives torchrun, which
# closes inherited file descriptors).
SOCKET_ENV = "DLCPROF_ATTACH_SOCKET"
# The folder that holds the dlcprof package, so the bootstrap imports exactly
# this dlcprof without putting a site-packages folder on the program's path.
ROOT_ENV = "DLCPROF_ATTACH_ROOT"
# The folder for torch's raw trace of each process (a worker's run's too).
RAW_TRACE_DIR_ENV = "DLCPROF_RAW_TRACE_DIR"
# Set by --eager-baseline: the bootstrap makes torch.compile run eager.
EAGER_ENV = "DLCPROF_ATTACH_EAGER"
# Set in both runs of --eager-baseline: each call of what torch.compile returned
# is timed (worker/attached/steps.py), for the per-step comparison.
STEPS_ENV = "DLCPROF_ATTACH_STEPS"
# Set by `dlcprof try` on an attached program: a graph break's hatch that is a
# setting (hatches.SETTINGS), set by the probes at Dynamo's import, before the
# program's first compile (worker/remedies.py: set_hatch).
HATCH_ENV = "DLCPROF_ATTACH_HATCH"
# What a process's warning that the hatch could not be set starts with.
HATCH_UNSET = "dlcprof try's hatch"
# Set by `dlcprof try` on a mark_dynamic advice: the compiled code's input dims
# to make dynamic, by torch's names of them ("L['x']:1,L['kwargs']['mask']:1"),
# set by the probes as torch.compiler.config.dynamic_sources before the
# program's first compile (worker/remedies.py: set_dynamic_sources).
DYNAMIC_ENV = "DLCPROF_ATTACH_DYNAMIC"
DYNAMIC_UNSET = "dlcprof try's dynamic sources"
# Set by `dlcprof try` on a Mega-Cache advice: a file of compile artifacts the
# probes load before the program compiles when it exists and save at its exit
# (worker/remedies.py: load_artifacts, save_artifacts), as --cache-artifacts does.
CACHE_ARTIFACTS_ENV = "DLCPROF_ATTACH_CACHE_ARTIFACTS"

# Kernel times (worker/attached/kernel_sample.py): each compiled graph's calls
# after the first SAMPLE_AFTER_CALLS run with their launches timed, SAMPLED_CALLS of them.
SAMPLE_AFTER_CALLS = 1
SAMPLED_CALLS = 3
SAMPLED_WHICH = f"calls {SAMPLE_AFTER_CALLS + 1}-{SAMPLE_AFTER_CALLS + SAMPLED_CALLS} of each graph"
NOT_SAMPLED_YET = f"not sampled yet: {SAMPLED_WHICH} are"

# Put on the program's PYTHONPATH: Python runs its sitecustomize.py at startup.
BOOTSTRAP_DIR = Path(__file__).resolve().parent / "worker" / "attached" / "bootstrap"
PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # what ROOT_ENV names
