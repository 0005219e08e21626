"""Torch's structured-trace records (the feed behind tlparse, what a
``TORCH_TRACE`` log holds) turned into dlcprof events, without torch.

``payloads.py`` reads one record's metadata and payload; ``dispatcher.py``'s
``TraceDispatcher`` turns a stream of records into events. The live probe
(``worker/probes/trace.py``) feeds it the records torch logs; a reader of
``TORCH_TRACE`` files may feed it the same records, on either side.
"""
