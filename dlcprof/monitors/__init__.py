"""Monitors that watch the worker from the outside (parent process, no torch).

- ``device``:   GPU utilization and memory via NVML, or the worker's CPU via psutil.
- ``hotspots``: the compiler's own hot Python frames via py-spy (live + speedscope).
- ``doctor``:   environment checks (torch build, compiler, NVML, py-spy, caches).
- ``nvml``:     the one place NVML is called ("n/a" instead of a crash).

None of them imports torch or textual.
"""
