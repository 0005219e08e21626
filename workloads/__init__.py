"""Bundled dlcprof workloads (installed as ``dlcprof.bundled``).

Each file is written exactly like a user's workload: it imports torch, never
dlcprof, and defines ``build(device, dtype, size="default")`` returning
``(fn, args)``; optionally ``inputs_for(n, device, dtype)``, ``SIZES`` and
``SMALL_SIZES`` for shape sweeps. List them with ``dlcprof list``.
"""
