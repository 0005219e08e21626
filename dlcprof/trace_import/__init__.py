"""``dlcprof import``: torch's ``TORCH_TRACE`` logs of any job, any number of
ranks, read into an ordinary session (docs/import.md). ``sources.py`` finds the
logs, ``process_log.py`` reads one through the shared parser in a pool worker,
``job.py`` gives each process its rank, groups the ranks and builds the session.
"""
