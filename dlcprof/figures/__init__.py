"""Every figure derived from a Session, computed once for every view.

Each module also words its topic, with the units of ``dlcprof.text``; panes,
the headless console and the reports only place the result, and none of them
derives a number of its own, so two views cannot disagree. Nothing here
renders, and nothing here imports Rich, Textual, the report writers or the
monitors.

- ``phases``: torch's phase names -> stage, label, colour; totals and trees.
- ``benchmark``: speedup, break-even, the noise verdict, split repetitions, why there is none.
- ``allocator``: the default and the steady-allocator speedup side by side, page faults.
- ``recompiles``: guard-failure reasons, recompile costs, static-vs-dynamic sweeps.
- ``kernels``: kernels grouped across compiles, their source lines, time per kernel,
  what fusion saved, bytes and bandwidth.
- ``modes``: what a mode autotuned, its CUDA graphs, every mode side by side.
- ``device``, ``hotspots``: monitor samples per run and per span.
- ``observer``: what watched a run, what it cost, whether timing was quiet.
- ``runs``: time origins, titles and labels of runs and sessions.
- ``paper``: the findings of arXiv 2611.04273, from the runs ``dlcprof paper`` made.
"""
