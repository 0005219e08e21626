"""Every figure derived from a Session, computed once for every view.

Each module also words its topic, with the units of ``dlcprof.text``; panes,
the headless console and the reports only place the result, and none of them
derives a number of its own, so two views cannot disagree. Nothing here
renders, and nothing here imports Rich, Textual, the report writers or the
monitors.

- ``phases``: torch's phase names -> stage, label, colour; totals and trees.
- ``benchmark``: speedup, break-even, the noise verdict, split repetitions, why there is none.
- ``allocator``: the default and the steady-allocator speedup side by side, page faults.
- ``cache``: a compile's graph-cache state, and the precompiled header it built;
  ``cache_misses``: each cache layer's lookups, and why a compile missed (against a
  baseline run's key components, or from one run alone).
- ``boot``: an attached process's start to its first compiled call and to steady
  state, split into import, the compile stages, first runs and between; what the
  cache hits saved.
- ``outcome``: what a run's first call came to: compiled graphs, or nothing compiled.
- ``recompiles``: guard-failure reasons, recompile costs, static-vs-dynamic sweeps.
- ``graph_breaks``: each break once however many frames hit it, the graphs it added,
  the logging call it names.
- ``kernels``: kernels grouped across compiles, their source lines, time per kernel,
  what fusion saved, bytes and bandwidth.
- ``modes``: what a mode autotuned, its CUDA graphs, every mode side by side.
- ``compile_cost``: compile seconds by the user's functions and modules.
- ``advice/``: what to change, from the session's own numbers, and ``dlcprof try``.
- ``check/``: a CI gate (``dlcprof check``, the pytest plugin): a session's findings
  judged against budgets and a baseline, matched without compile ids.
- ``device``, ``hotspots``: monitor samples per run and per span.
- ``observer``: what watched a run, what it cost, whether timing was quiet.
- ``runs``: time origins, titles and labels of runs and sessions.
- ``live_log``: a run's events as both live logs word them (console, Log pane).
- ``compare``: two runs side by side (``dlcprof compare``); ``compare_kernels``
  (kernels added, removed, changed and their times), ``compare_metrics``
  (the headline numbers: compile, autotuning, benchmark, sweep).
- ``graph_kind``: what kind of graph a workload is (GEMM-bound, overhead-bound,
  fusion-friendly), judged from its kernels.
- ``paper``: the runs ``dlcprof paper`` made and the findings of arXiv 2611.04273;
  ``paper_tables``: the rows and columns every view shows of them.
- ``job/``: an attached program and its job (``dlcprof run -- CMD``): ``program``
  (its timeline, each graph's life), ``rank_runs`` (which runs are ranks),
  ``ranks`` (the Ranks table), ``divergence`` (the checks that find ranks
  disagreeing), ``blocked`` (a rank's wait on a peer's solo recompile), ``lanes``
  (the Ranks view's geometry), ``ddp`` (what DDP did to a compile), ``nodes`` (a
  merged job's clocks), ``groups`` (each rank's one record, and the ranks grouped
  by what they did, outliers first), ``imported`` (what a
  session ``dlcprof import`` read says of itself, and its n/a), ``hosts`` (each
  host's kernel-build workers against its cores), ``steps`` (--eager-baseline's
  per-step comparison past the compiles).
"""
