"""The torch side: the only code of dlcprof that imports torch, run in the
processes whose compiles dlcprof watches, never in dlcprof's own. Three hosts
install the same probes (``probe_set.py``, each host's extras listed there):

- the worker subprocess (``run.py``): ``python -m dlcprof.worker --events-fd N``
  imports torch, says ``WorkerReady``, reads one run request line from stdin,
  compiles and measures the workload, and writes every fact it learns as an
  event (JSON lines) on fd N;
- each Python process of an attached program (``attached/``, ``dlcprof [run]
  -- CMD``), over a socket per process;
- the test process of dlcprof's pytest plugin (``pytest_plugin/``), folding
  straight into a Session.

``probes/`` holds one adapter per torch API they rely on.
"""
