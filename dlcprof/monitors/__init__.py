"""Monitors that watch the worker from the outside (parent process, no torch).

- ``device``:   GPU utilization and memory via NVML, or the worker's CPU via psutil.
- ``nvml``:     the one place NVML is called ("n/a" instead of a crash).
- ``hotspots``: the py-spy sampler: the compiler's own hot Python frames (live + speedscope).
- ``pyspy``:    where py-spy is, its version, whether it may attach (``dlcprof doctor``).
- ``samples``:  sampled stacks as data: speedscope read back, hot-frame rows, by phase.
- ``process``:  both monitors on one process (a run's worker, each attached process).
- ``watch``:    how long a monitor watched, pauses excluded (its CPU cost is a share of it).

None of them imports torch or textual.
"""
