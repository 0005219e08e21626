"""What the tests share, one module per concern: ``paths`` (the repository's
folders), ``recorded`` (the recorded real runs under tests/fixtures),
``engine`` (a scripted engine in place of a worker), ``scripted_program``
(a scripted attached program in place of a real one), ``tui`` (driving the
app under the Pilot), ``views`` (every view of a session as plain text),
``proc`` (real dlcprof processes and who is alive), ``attached_run`` (a program
under ``dlcprof run --json``, and a program's line by its words), ``worker`` (a real worker
subprocess), ``program`` (an attached program's events by hand), ``report``
(the sessions the report tests run on), ``paper`` (a ``dlcprof paper``
session), ``monitors`` (a stand-in NVML), ``trace`` (recorded structured
traces replayed through the probes), ``torch_trace`` (recorded TORCH_TRACE
logs, widened to many ranks), ``events`` (events built by hand, their other
fields filled in)."""
