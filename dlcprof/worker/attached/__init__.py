"""The program's side of attaching: what runs inside the user's own program.

- ``bootstrap/sitecustomize.py``: put on the program's ``PYTHONPATH``, it runs
  in every Python process of the program's tree, waits for ``import torch``
  to finish, then calls ``probe.install`` (never imports torch itself).
- ``probe.py``: the worker's probes (``worker/probe_set.py``) fed to
  ``channel.py`` (one AF_UNIX stream per process, non-blocking, bounded);
  ``graph_calls.py`` times each compiled graph's calls, ``kernel_sample.py``
  times the kernels of a few of them, ``rendezvous.py`` notes when the process
  group finished initializing.

dlcprof's side is ``dlcprof/attach``; the environment names and the sampling
policy both sides follow are ``dlcprof/attach_contract.py``.
"""
