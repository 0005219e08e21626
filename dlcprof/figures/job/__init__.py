"""The figures of an attached program and its job (``dlcprof run -- CMD``,
torchrun's ranks, the nodes ``dlcprof merge`` joins); the map is in
``dlcprof.figures``."""
