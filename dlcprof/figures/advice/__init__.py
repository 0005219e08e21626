"""What to change, from one session's own numbers: one rule per remedy of
PyTorch's "Reducing compile time" list, each item with the change (a snippet at
the user's file:line where one applies), the evidence it rests on, the
predicted saving and how it was predicted, and the known cost.

- ``model``: an item of advice, its prediction, the list of them; the compile
  seconds a rule predicts from and their noise; the prediction in words.
- ``rules``: ``RULES``, one row per rule saying where it applies (a workload's
  run, an attached program's process) and whether its saving must clear the
  noise; ``advise`` reads a run through them.
- ``failure_rules``: the rules read from what went wrong (a compile that raised
  into the program, the recompile limit hit), listed first.
- ``job_rules``: the rule read from a distributed job's ranks (a rank that
  recompiled alone, and what its peers waited), listed before one process's rules.
- ``compile_rules``: the rules read from the compiles (regional compilation,
  recompiles on an input's size, graph breaks, compile threads).
- ``speed_rules``: the rules read from the benchmark and the kernel times (keep
  the cache, a mode that pays back sooner, freezing, reduce-overhead, no payback).
- ``trial``: ``dlcprof try``, the change measured beside its prediction.
"""
