"""Torch's structured-trace records (the feed behind tlparse, what a
``TORCH_TRACE`` log holds) turned into dlcprof events, without torch.

- ``payloads.py`` reads one record's metadata and payload;
- ``gb_catalogue.py`` reads torch's catalogue of graph breaks (each break
  type's id, title, hints and page) from the installed torch's folder
  (``torch_dir.py``: where torch is, found without importing it);
- ``dispatcher.py``'s ``TraceDispatcher`` turns a stream of records into
  events, one reader per record name;
- ``log_file.py`` reads a ``TORCH_TRACE`` log back as records, streaming, its
  damage counted;
- ``kernels.py``'s ``KernelCollector`` turns Inductor's output code, post-grad
  graph and provenance payloads into each graph's kernels.

The live probe (``worker/probes/trace.py``) feeds it the records torch logs;
``dlcprof import`` (``trace_import/``) feeds it a log's records.
"""
