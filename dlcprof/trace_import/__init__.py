"""``dlcprof import``: torch's ``TORCH_TRACE`` logs of any job, any number of
ranks, read into an ordinary session (docs/import.md). ``sources.py`` finds the
logs, ``process_log.py`` reads one as one run through the shared parser in a
pool worker, ``log_kind.py`` says a log that is not ``torch.compile``'s,
``job.py`` gives each log its rank, tells the job's runs apart, groups the
ranks and builds the session; ``nodes.py`` does it as a map-reduce over a
job's nodes (a summary per node, then their merge).
"""
