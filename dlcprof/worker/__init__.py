"""The worker subprocess: the only place dlcprof imports torch.

``python -m dlcprof.worker --events-fd N`` imports torch, says ``WorkerReady``,
reads one run request line from stdin, compiles and measures the workload, and
writes every fact it learns as an event (JSON lines) on fd N.
"""
