"""dlcprof: a terminal profiler for PyTorch's compiler."""

__version__ = "0.1.0"
